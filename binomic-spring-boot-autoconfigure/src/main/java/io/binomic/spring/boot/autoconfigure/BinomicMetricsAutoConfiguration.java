package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Binomic;
import io.binomic.micrometer.BinomicMeterBinder;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Binomic's meters ({@link BinomicMeterBinder}) in the application's registry when Micrometer and
 * {@code binomic-micrometer} are present: Spring Boot binds every {@code MeterBinder} bean to its
 * registries, before the worker starts.
 */
@AutoConfiguration(after = BinomicAutoConfiguration.class)
@ConditionalOnClass({MeterRegistry.class, BinomicMeterBinder.class})
@ConditionalOnBean(Binomic.class)
public class BinomicMetricsAutoConfiguration {

    /** The binder of the application's client; closed with the context. */
    @Bean
    @ConditionalOnMissingBean
    public BinomicMeterBinder binomicMeterBinder(Binomic binomic) {
        return new BinomicMeterBinder(binomic);
    }
}
