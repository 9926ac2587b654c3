package io.binomic.spring.boot.test;

import io.binomic.api.TaskBinding;
import io.binomic.api.spi.TaskProvider;
import io.binomic.core.Binomic;
import io.binomic.core.testing.TestMode;
import io.binomic.spring.boot.autoconfigure.BinomicAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The test mode in place of the broker, imported by {@link AutoConfigureBinomicTestMode}: it runs
 * before {@link BinomicAutoConfiguration}, whose client and worker then stand aside.
 */
@AutoConfiguration(before = BinomicAutoConfiguration.class)
public class BinomicTestModeAutoConfiguration {
    /** The property that chooses the mode: {@code manual} or {@code inline}. */
    public static final String MODE_PROPERTY = "binomic.test-mode";

    /** The test mode with the handlers of the context's {@code TaskBinding} and {@code TaskProvider} beans. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public TestMode binomicTestMode(ObjectProvider<TaskBinding<?, ?>> bindings, ObjectProvider<TaskProvider> providers,
                                    Environment environment) {
        String mode = environment.getProperty(MODE_PROPERTY, "manual");
        TestMode.Builder builder = switch (mode) {
            case "manual" -> TestMode.manual();
            case "inline" -> TestMode.inline();
            default -> throw new IllegalArgumentException(MODE_PROPERTY + " is '" + mode + "': set manual (jobs wait for"
                    + " TestMode.drain()) or inline (each job runs inside its submit)");
        };
        bindings.orderedStream().forEach(builder::handle);
        providers.orderedStream().forEach(p -> p.tasks().forEach(builder::handle));
        return builder.start();
    }

    /** The client the application submits through: the test mode's. */
    @Bean
    @ConditionalOnMissingBean
    public Binomic binomic(TestMode testMode) {
        return testMode.binomic();
    }
}
