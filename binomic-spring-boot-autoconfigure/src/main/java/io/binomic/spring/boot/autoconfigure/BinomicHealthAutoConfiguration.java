package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Binomic;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code binomic} health contributor ({@link BinomicHealthIndicator}) when Spring Boot's health
 * support is present, with or without a worker (a producer-only application reports whether its
 * broker answers); {@code management.health.binomic.enabled=false} turns it off.
 */
@AutoConfiguration(after = BinomicAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean(Binomic.class)
@ConditionalOnEnabledHealthIndicator("binomic")
public class BinomicHealthAutoConfiguration {

    /** Reports the health of the worker the lifecycle runs, or when none runs, of the client's broker. */
    @Bean
    @ConditionalOnMissingBean(name = "binomicHealthIndicator")
    public BinomicHealthIndicator binomicHealthIndicator(Binomic binomic, ObjectProvider<BinomicWorkerLifecycle> lifecycle) {
        return new BinomicHealthIndicator(binomic, () -> Optional.ofNullable(lifecycle.getIfAvailable()).flatMap(BinomicWorkerLifecycle::worker));
    }
}
