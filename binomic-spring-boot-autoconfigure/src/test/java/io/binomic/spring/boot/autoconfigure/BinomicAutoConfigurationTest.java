package io.binomic.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskContext;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.micrometer.BinomicMeterBinder;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class BinomicAutoConfigurationTest {
    record Greeting(String name) { }

    static final Task<Greeting, String> GREET = Task.builder("greet", Greeting.class, String.class).queue("mail").build();

    @Configuration(proxyBeanMethods = false)
    static class Handlers {
        @Bean
        TaskBinding<Greeting, String> greet() {
            return GREET.handledBy(g -> "Hello " + g.name());
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
            BinomicAutoConfiguration.class, BinomicHealthAutoConfiguration.class, BinomicMetricsAutoConfiguration.class));

    @Test
    void propertiesDefaultsAreTheBuildersDefaults() {
        BinomicConfig fromProperties = BinomicConfigs.of(new BinomicProperties());
        assertThat(fromProperties.worker()).isEqualTo(BinomicConfig.defaults().worker());
        assertThat(fromProperties.taskDefaults()).isEqualTo(BinomicConfig.defaults().taskDefaults());
        assertThat(fromProperties.broker()).isEqualTo(BinomicConfig.defaults().broker());
        assertThat(fromProperties).isEqualTo(BinomicConfig.defaults());
    }

    @Test
    void applicationPropertiesReachTheConfiguration() {
        runner.withPropertyValues("binomic.broker.key-prefix=shop", "binomic.worker.concurrency=12", "binomic.worker.queues=mail,audit",
                "binomic.task-defaults.max-attempts=7", "binomic.task-defaults.backoff.base=2s", "binomic.task-defaults.backoff.cap=1m",
                "binomic.worker.shutdown-grace=3s", "binomic.broker.options.priority.fairness=4").run(context -> {
                    BinomicConfig config = context.getBean(BinomicConfig.class);
                    assertThat(config.broker().keyPrefix()).isEqualTo("shop");
                    assertThat(config.broker().options()).containsEntry("priority.fairness", "4");
                    assertThat(config.worker().concurrency()).isEqualTo(12);
                    assertThat(config.worker().queues()).containsExactly("mail", "audit");
                    assertThat(config.worker().shutdownGrace()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(config.taskDefaults().maxAttempts()).isEqualTo(7);
                    assertThat(config.taskDefaults().backoff().base()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(config.taskDefaults().backoff().cap()).isEqualTo(Duration.ofMinutes(1));
                });
    }

    /** Spring Boot ignores an unknown property set by an environment variable; a BINOMIC_* one close to a property is warned of. */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void aMistypedEnvironmentVariableIsWarnedOfNamingTheOneMeant(org.springframework.boot.test.system.CapturedOutput output) {
        var environment = new org.springframework.core.env.StandardEnvironment() {
            @Override
            public java.util.Map<String, Object> getSystemEnvironment() {
                return java.util.Map.of("BINOMIC_WORKER_CONCURENCY", "3", "BINOMIC_WORKER_CONCURRENCY", "4",
                        "BINOMIC_BROKER_OPTIONS_PRIORITY_FAIRNESS", "4", "BINOMIC_JAVA_OPTS", "-Xmx1g", "PATH", "/bin");
            }
        };
        BinomicAutoConfiguration.warnOfMistypedEnvironmentVariables(environment);
        assertThat(output.toString()).contains("environment variable BINOMIC_WORKER_CONCURENCY is not a binomic.* property Spring Boot"
                + " reads, and is ignored; did you mean BINOMIC_WORKER_CONCURRENCY?")
                .doesNotContain("variable BINOMIC_WORKER_CONCURRENCY ").doesNotContain("BINOMIC_BROKER_OPTIONS_PRIORITY_FAIRNESS is")
                .doesNotContain("BINOMIC_JAVA_OPTS");
    }

    /** A short lease alone is valid: the poll and the reclaim period left out follow it, as in WorkerConfig. */
    @Test
    void aShortLeaseAloneIsValid() {
        runner.withPropertyValues("binomic.worker.lease-timeout=1s").run(context -> {
            BinomicConfig config = context.getBean(BinomicConfig.class);
            assertThat(config.worker().pollTimeout()).isEqualTo(java.time.Duration.ofMillis(500));
            assertThat(config.worker().reclaimInterval()).isEqualTo(java.time.Duration.ofMillis(500));
        });
    }

    @Test
    void aRedissonFileChoosesTheRedisBrokerWithoutAUrl() {
        BinomicProperties p = new BinomicProperties();
        p.getBroker().setRedissonConfig("/etc/redisson.yaml");
        var broker = BinomicConfigs.broker(p.getBroker());
        assertThat(broker.brokerId()).contains("redis");
        assertThat(broker.options()).containsEntry("redisson.config", "/etc/redisson.yaml");
    }

    @Test
    void invalidSettingsFailTheStartNamingTheSetting() {
        runner.withPropertyValues("binomic.worker.concurrency=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("concurrency");
        });
    }

    @Test
    void handlerBeansRunOnTheWorkerStartedWithTheContextAndHealthSaysConsuming() {
        runner.withUserConfiguration(Handlers.class).withPropertyValues("binomic.worker.poll-timeout=100ms").run(context -> {
            Binomic binomic = context.getBean(Binomic.class);
            assertThat(binomic.submit(GREET, new Greeting("Ada")).await(Duration.ofSeconds(10))).isEqualTo("Hello Ada");
            BinomicWorkerLifecycle lifecycle = context.getBean(BinomicWorkerLifecycle.class);
            assertThat(lifecycle.isRunning()).isTrue();
            Health health = context.getBean(BinomicHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("state", "CONSUMING").containsEntry("succeeded", 1L)
                    .containsKey("sinceFetchRound").containsKey("consumer");
            assertThat(context).hasSingleBean(BinomicMeterBinder.class);
        });
    }

    @Test
    void runObserverBeansAreToldOfEveryRun() {
        List<String> seen = new CopyOnWriteArrayList<>();
        RunObserver observer = (TaskContext job) -> (RunOutcome outcome, Optional<Throwable> failure) ->
                seen.add(job.task() + " " + outcome);
        runner.withUserConfiguration(Handlers.class).withBean(RunObserver.class, () -> observer)
                .withPropertyValues("binomic.worker.poll-timeout=100ms").run(context -> {
                    Binomic binomic = context.getBean(Binomic.class);
                    assertThat(binomic.submit(GREET, new Greeting("Ada")).await(Duration.ofSeconds(10))).isEqualTo("Hello Ada");
                    assertThat(seen).containsExactly("greet SUCCEEDED");
                });
    }

    @Test
    void aDashboardReachableFromOtherHostsWithoutATokenFailsTheStartNamingTheProperties() {
        runner.withPropertyValues("binomic.dashboard.enabled=true", "binomic.dashboard.address=0.0.0.0", "binomic.dashboard.port=0")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("needs a token");
                    assertThat(context.getStartupFailure()).hasStackTraceContaining("binomic.dashboard.address, port and token");
                });
        runner.withPropertyValues("binomic.dashboard.enabled=true", "binomic.dashboard.address=0.0.0.0", "binomic.dashboard.port=0",
                "binomic.dashboard.token=0123456789abcdef0123", "binomic.dashboard.read-only=true").run(context -> {
                    Dashboard dashboard = context.getBean(Dashboard.class);
                    assertThat(dashboard.isReadOnly()).isTrue();
                    assertThat(dashboard.address().getAddress().isAnyLocalAddress()).isTrue();
                });
    }

    @Test
    void withoutHandlersOrQueuesNoWorkerRunsAndHealthIsUnknown() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(Binomic.class);
            assertThat(context.getBean(BinomicWorkerLifecycle.class).isRunning()).isFalse();
            assertThat(context.getBean(BinomicHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UNKNOWN);
        });
    }

    @Test
    void theWorkerStopsWithTheContextAndTheClientCloses() {
        BinomicWorkerLifecycle[] lifecycle = new BinomicWorkerLifecycle[1];
        runner.withUserConfiguration(Handlers.class).run(context -> lifecycle[0] = context.getBean(BinomicWorkerLifecycle.class));
        assertThat(lifecycle[0].isRunning()).isFalse();
    }
}
