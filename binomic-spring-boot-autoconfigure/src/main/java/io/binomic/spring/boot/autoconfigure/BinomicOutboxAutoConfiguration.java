package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * The transactional outbox when {@code binomic-jdbc} and a {@link DataSource} are present: an
 * {@link Outbox} of the application's client, and an {@link OutboxRelay} on the DataSource, run
 * with the context ({@code binomic.outbox.relay=false} leaves it to another process). A submit
 * joins the Spring transaction when it writes on {@link DataSourceUtils#getConnection}'s
 * connection, the one the transaction manager commits or rolls back.
 */
@AutoConfiguration(after = BinomicAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({Outbox.class, DataSourceUtils.class})
@ConditionalOnBean({Binomic.class, DataSource.class})
public class BinomicOutboxAutoConfiguration {

    /** Writes jobs into the outbox table on the caller's connection. */
    @Bean
    @ConditionalOnMissingBean
    public Outbox binomicOutbox(Binomic binomic) {
        return Outbox.of(binomic);
    }

    /** Moves committed rows into the broker from a thread of its own; stopped with the context. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "binomic.outbox.relay", matchIfMissing = true)
    public OutboxRelay binomicOutboxRelay(Binomic binomic, DataSource dataSource) {
        return OutboxRelay.builder(binomic, dataSource).build().start();
    }
}
