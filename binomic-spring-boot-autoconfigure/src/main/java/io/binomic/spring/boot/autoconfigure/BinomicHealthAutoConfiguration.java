package io.binomic.spring.boot.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code binomic} health contributor ({@link BinomicHealthIndicator}) when Spring Boot's health
 * support is present; {@code management.health.binomic.enabled=false} turns it off.
 */
@AutoConfiguration(after = BinomicAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean(BinomicWorkerLifecycle.class)
@ConditionalOnEnabledHealthIndicator("binomic")
public class BinomicHealthAutoConfiguration {

    /** Reports the health of the worker the lifecycle runs. */
    @Bean
    @ConditionalOnMissingBean(name = "binomicHealthIndicator")
    public BinomicHealthIndicator binomicHealthIndicator(BinomicWorkerLifecycle lifecycle) {
        return new BinomicHealthIndicator(lifecycle::worker);
    }
}
