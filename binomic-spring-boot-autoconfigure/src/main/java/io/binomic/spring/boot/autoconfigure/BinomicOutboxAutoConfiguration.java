package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import io.binomic.jdbc.OutboxStats;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.sql.SQLException;
import java.util.function.ToDoubleFunction;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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

    /**
     * Moves committed rows into the broker from a thread of its own; stopped with the context. It starts after the
     * database initialisers (Flyway, Liquibase, schema.sql), since its start checks the table.
     */
    @Bean(destroyMethod = "close")
    @DependsOnDatabaseInitialization
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "binomic.outbox.relay", matchIfMissing = true)
    public OutboxRelay binomicOutboxRelay(Binomic binomic, DataSource dataSource) {
        return OutboxRelay.builder(binomic, dataSource).build().start();
    }

    /** The relay's table as meters, when Micrometer is present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Meters {
        /**
         * {@code binomic.outbox.waiting} and {@code binomic.outbox.oldest.age} (seconds), tagged with the table: the rows
         * committed and not yet relayed, read from the table at each scrape (NaN when it cannot be read).
         */
        @Bean
        @ConditionalOnMissingBean(name = "binomicOutboxMeters")
        MeterBinder binomicOutboxMeters(ObjectProvider<OutboxRelay> relay) {
            return registry -> relay.ifAvailable(r -> {
                Gauge.builder("binomic.outbox.waiting", r, x -> read(x, OutboxStats::waiting)).tag("table", r.table())
                        .description("Outbox rows committed and not yet relayed into the broker.").register(registry);
                Gauge.builder("binomic.outbox.oldest.age", r, x -> read(x, s -> s.oldestAge().toMillis() / 1000.0)).tag("table", r.table())
                        .baseUnit("seconds").description("Age of the oldest outbox row not yet relayed; 0 when none waits.")
                        .register(registry);
            });
        }

        private static double read(OutboxRelay relay, ToDoubleFunction<OutboxStats> value) {
            try {
                return value.applyAsDouble(relay.stats());
            } catch (SQLException e) {
                return Double.NaN;
            }
        }
    }
}
