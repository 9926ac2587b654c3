package io.binomic.spring.boot.autoconfigure;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.TaskProvider;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.core.internal.Providers;
import io.binomic.core.testing.TestMode;
import java.time.Duration;
import java.util.Optional;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * A started {@link Binomic} client from {@code binomic.*}, with the handlers of the context's
 * {@link TaskBinding} and {@link TaskProvider} beans and the tasks of its {@link Task} beans, and a
 * worker run with the context ({@link BinomicWorkerLifecycle}).
 *
 * <p>Handlers are beans of type {@code TaskBinding} ({@code GREET.handledBy(service::greet)}),
 * not annotated methods: a task is a typed definition shared with the producers, so binding it to
 * a method reference lets the compiler check the argument and result types, where an annotation
 * would be matched by name at run time; it is also the shape the plain Java API has.
 */
@AutoConfiguration
@EnableConfigurationProperties(BinomicProperties.class)
public class BinomicAutoConfiguration {
    private static final Log LOG = LogFactory.getLog(BinomicAutoConfiguration.class);

    /** The configuration built from {@code binomic.*}; a bean of its own replaces it. */
    @Bean
    @ConditionalOnMissingBean
    public BinomicConfig binomicConfig(BinomicProperties properties, Environment environment) {
        warnOfUnboundEnvironmentVariables(environment, properties);
        return BinomicConfigs.of(properties);
    }

    /**
     * Logs a warning for each {@code BINOMIC_*} environment variable no property binds ({@link EnvironmentVariables}),
     * a broker option's checked against the options of the broker {@code properties} select.
     */
    static void warnOfUnboundEnvironmentVariables(Environment environment, BinomicProperties properties) {
        if (environment instanceof ConfigurableEnvironment configurable) {
            EnvironmentVariables.warnings(configurable.getSystemEnvironment(), brokerOptions(properties)).forEach(LOG::warn);
        }
    }

    /** The options of the broker {@code properties} select; none when they select none, which fails the start on its own. */
    private static Optional<Providers.KnownOptions> brokerOptions(BinomicProperties properties) {
        try {
            return Providers.brokerOptions(BinomicConfigs.broker(properties.getBroker()));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * The started client; closed (its workers stopped, its broker released) with the context. The
     * context's {@link RunObserver} beans are added to it, beside those {@code ServiceLoader} finds.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Binomic binomic(BinomicConfig config, ObjectProvider<TaskBinding<?, ?>> bindings, ObjectProvider<TaskProvider> providers,
                           ObjectProvider<Task<?, ?>> tasks, ObjectProvider<BinomicBuilderCustomizer> customizers,
                           ObjectProvider<RunObserver> observers) {
        Binomic.Builder builder = Binomic.builder().config(config);
        // Declared first: binding a declared task then adds its handler, not a second declaration.
        tasks.orderedStream().forEach(builder::task);
        bindings.orderedStream().forEach(builder::handle);
        providers.orderedStream().forEach(p -> p.tasks().forEach(builder::handle));
        customizers.orderedStream().forEach(c -> c.customize(builder));
        Binomic binomic = builder.build();
        observers.orderedStream().forEach(binomic::addRunObserver);
        return binomic.start();
    }

    /**
     * The dashboard and {@code /metrics} of the client when {@code binomic.dashboard.enabled} is
     * true, on their own port (the JDK's HTTP server, not the application's nor the management
     * server) with the core's rules: loopback unless given a token. Stopped with the context.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "binomic.dashboard.enabled")
    public Dashboard binomicDashboard(Binomic binomic, BinomicProperties properties) {
        BinomicProperties.Dashboard settings = properties.getDashboard();
        Dashboard started;
        try {
            Dashboard.Builder dashboard = binomic.dashboard().bindAddress(settings.getAddress()).port(settings.getPort())
                    .readOnly(settings.isReadOnly());
            if (settings.getToken() != null) {
                dashboard.token(settings.getToken());
            }
            started = dashboard.start();
        } catch (IllegalArgumentException e) {
            String message = e.getMessage().replace("needs a token: set one", "needs a token: set binomic.dashboard.token")
                    .replace("or bind to 127.0.0.1", "or set binomic.dashboard.address to 127.0.0.1");
            throw new IllegalArgumentException(message.equals(e.getMessage())
                    ? message + " (properties binomic.dashboard.address, port and token)" : message, e);
        }
        LOG.info("Binomic dashboard at " + started.uri());
        return started;
    }

    /**
     * The worker, started and stopped with the context; only when there is something to read (a
     * handler or {@code binomic.worker.queues}), and never beside the test mode.
     */
    @Bean
    @ConditionalOnMissingBean({BinomicWorkerLifecycle.class, TestMode.class})
    @ConditionalOnBooleanProperty(name = "binomic.worker.enabled", matchIfMissing = true)
    public BinomicWorkerLifecycle binomicWorkerLifecycle(Binomic binomic, BinomicConfig config, Environment environment,
                                                         ObjectProvider<TaskBinding<?, ?>> bindings, ObjectProvider<TaskProvider> providers) {
        Duration phaseTimeout = environment.getProperty("spring.lifecycle.timeout-per-shutdown-phase", Duration.class,
                Duration.ofSeconds(30));
        boolean work = bindings.stream().findAny().isPresent() || providers.stream().findAny().isPresent()
                || !config.worker().queues().isEmpty();
        if (!work) {
            LOG.info("Binomic runs no worker: no TaskBinding or TaskProvider bean, and binomic.worker.queues is empty");
        }
        return new BinomicWorkerLifecycle(binomic, config.worker(), phaseTimeout, work);
    }
}
