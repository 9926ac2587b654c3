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
import io.binomic.core.internal.Providers;
import io.binomic.micrometer.BinomicMeterBinder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;
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
        BinomicProperties properties = new BinomicProperties();
        properties.getBroker().setUrl("memory://");
        BinomicAutoConfiguration.warnOfUnboundEnvironmentVariables(environment, properties);
        assertThat(output.toString()).contains("environment variable BINOMIC_WORKER_CONCURENCY is not a binomic.* property Spring Boot"
                + " reads, and is ignored; did you mean BINOMIC_WORKER_CONCURRENCY?")
                .doesNotContain("variable BINOMIC_WORKER_CONCURRENCY ").doesNotContain("BINOMIC_BROKER_OPTIONS_PRIORITY_FAIRNESS is")
                .doesNotContain("BINOMIC_JAVA_OPTS");
    }

    /**
     * The command's variable of a broker option the broker does not read: Boot's variable of the same name would carry
     * the typo on to a failed start, so the warning names the closest option's variable, or the broker's options.
     */
    @Test
    void theCommandsVariableOfAnUnknownBrokerOptionNamesTheClosestKnownOne() {
        var redis = Optional.of(new Providers.KnownOptions("redis",
                Set.of("eviction.allowed", "eviction.recheck", "priority.fairness")));
        assertThat(EnvironmentVariables.warnings(Map.of("BINOMIC_BROKER_OPTION_EVICTION_ALOWED", "true"), redis)).containsExactly(
                "environment variable BINOMIC_BROKER_OPTION_EVICTION_ALOWED is the binomic command's name of the setting"
                        + " broker.option.eviction.alowed, which Spring Boot does not read, and eviction.alowed is not an option of the"
                        + " redis broker: this application ignores it; did you mean eviction.allowed? Set"
                        + " BINOMIC_BROKER_OPTIONS_EVICTION_ALLOWED (the property binomic.broker.options.eviction.allowed) for it");
        assertThat(EnvironmentVariables.warnings(Map.of("BINOMIC_BROKER_OPTION_COLOUR", "red"), redis)).singleElement().asString()
                .endsWith("colour is not an option of the redis broker: this application ignores it; its options are"
                        + " eviction.allowed, eviction.recheck, priority.fairness")
                .doesNotContain("BINOMIC_BROKER_OPTIONS_COLOUR");
        var withFile = Optional.of(new Providers.KnownOptions("redis", Set.of("eviction.allowed", "redisson.config")));
        assertThat(EnvironmentVariables.warnings(Map.of("BINOMIC_BROKER_OPTION_REDISSON_CONFG", "/etc/r.yaml"), withFile)).singleElement()
                .asString().endsWith("did you mean redisson.config? Set BINOMIC_BROKER_REDISSONCONFIG (the property"
                        + " binomic.broker.redisson-config) for it")
                .as("the Redisson file's own property, which spring-boot.md tells to set");
        assertThat(EnvironmentVariables.warnings(Map.of("BINOMIC_BROKER_OPTION_EVICTION_ALLOWED", "true"), redis)).singleElement()
                .asString().contains("set BINOMIC_BROKER_OPTIONS_EVICTION_ALLOWED (the property binomic.broker.options.eviction.allowed)");
    }

    /** The builders' messages name fields in several ways; each becomes the property, for every field the properties map. */
    @Test
    void theBuildersNamesOfFieldsBecomeTheProperties() {
        assertThat(PropertyNames.inPropertyNames("pollTimeout (PT2S) must be shorter than leaseTimeout (PT1S)"))
                .isEqualTo("binomic.worker.poll-timeout (PT2S) must be shorter than binomic.worker.lease-timeout (PT1S)");
        assertThat(PropertyNames.inPropertyNames("backoff.cap must be >= backoff.base (PT1S), was PT0.5S"))
                .isEqualTo("binomic.task-defaults.backoff.cap must be >= binomic.task-defaults.backoff.base (PT1S), was PT0.5S");
        assertThat(PropertyNames.inPropertyNames("concurrency must be >= 1, was 0")).isEqualTo("binomic.worker.concurrency must be >= 1, was 0");
        assertThat(PropertyNames.inPropertyNames("consumerName 'a b' must be 1-200 of letters"))
                .isEqualTo("binomic.worker.consumer-name 'a b' must be 1-200 of letters");
        assertThat(PropertyNames.inPropertyNames("no payload codec with id 'x' (BinomicConfig.payloadCodec): add io.binomic.redis"))
                .isEqualTo("no payload codec with id 'x' (binomic.payload-codec): add io.binomic.redis");
        assertThat(PropertyNames.inPropertyNames("several match; choose one with BrokerConfig.brokerId(...)"))
                .isEqualTo("several match; choose one with binomic.broker.broker-id");
        assertThat(PropertyNames.inPropertyNames("url must start with a scheme such as redis://host:6379, was 'my.queueName'"))
                .isEqualTo("binomic.broker.url must start with a scheme such as redis://host:6379, was 'my.queueName'");
        assertThat(PropertyNames.inPropertyNames("binomic.task-defaults.backoff.jitter must be in [0, 1]"))
                .isEqualTo("binomic.task-defaults.backoff.jitter must be in [0, 1]");
        PropertyNames.byField().forEach((field, property) -> {
            String name = field.substring(field.lastIndexOf('.') + 1);
            if (!name.equals(name.toLowerCase(java.util.Locale.ROOT))) {
                assertThat(PropertyNames.inPropertyNames("a (1) must be shorter than " + name + " (2)")).as(field)
                        .isEqualTo("a (1) must be shorter than " + property + " (2)");
            }
            assertThat(PropertyNames.inPropertyNames(field + " must be positive")).as(field).isEqualTo(property + " must be positive");
        });
    }

    /** Each setting of the binomic command that a Boot application has, as its property. */
    @Test
    void theCommandsSettingsHaveTheirProperties() {
        assertThat(PropertyNames.ofSetting("task.maxAttempts")).contains("binomic.task-defaults.max-attempts");
        assertThat(PropertyNames.ofSetting("task.timeout")).contains("binomic.task-defaults.task-timeout");
        assertThat(PropertyNames.ofSetting("broker.id")).contains("binomic.broker.broker-id");
        assertThat(PropertyNames.ofSetting("task.backoff.jitter")).contains("binomic.task-defaults.backoff.jitter");
        assertThat(PropertyNames.ofSetting("broker.option.wait.replicas")).contains("binomic.broker.options.wait.replicas");
        assertThat(PropertyNames.ofSetting("master.workers")).isEmpty();
        io.binomic.core.internal.process.Settings.KEYS.stream().filter(k -> !k.startsWith("master."))
                .forEach(k -> assertThat(PropertyNames.ofSetting(k)).as(k).isPresent());
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

    /** Found by an outside tester: a URL scheme typo's report said "Correct the binomic.* setting named above", naming none. */
    @Test
    void aUrlSchemeNoBrokerServesNamesTheUrlProperty() {
        runner.withPropertyValues("binomic.broker.url=htp://127.0.0.1:6412").run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new BinomicFailureAnalyzer(null).analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith("no broker provider for URL scheme 'htp': use memory://, redis://"
                    + " or rediss:// in binomic.broker.url, or add the module of a broker serving this scheme");
            assertThat(analysis.getAction()).startsWith("Correct binomic.broker.url");
        });
    }

    /**
     * Found by an outside tester: every broker failure at start got "start the broker, or point X at one that
     * runs", X being whatever the description named (binomic.broker.username, binomic.broker.connect-timeout).
     */
    @Test
    void aBrokerThatAnswersGetsTheActionOfItsOwnHintNotStartTheBroker() {
        assertThat(brokerFailure("Redis at 127.0.0.1:6412 refused the password for user default: WRONGPASS invalid"
                + " username-password pair; check BrokerConfig.password and BrokerConfig.username (or user:password@ in BrokerConfig.url)"))
                .isEqualTo("Binomic connects to its broker while the application starts: check binomic.broker.password and"
                        + " binomic.broker.username (or user:password@ in binomic.broker.url).");
        assertThat(brokerFailure("Redis at 127.0.0.1:6412 accepted the connection but did not answer: no answer within 5000 ms"
                + " (BrokerConfig.connectTimeout); is it frozen or overloaded? check BrokerConfig.url, or raise BrokerConfig.connectTimeout"))
                .isEqualTo("Binomic connects to its broker while the application starts: is it frozen or overloaded? check"
                        + " binomic.broker.url, or raise binomic.broker.connect-timeout.");
        assertThat(brokerFailure("Redis at 127.0.0.1:6412 did not answer the TLS handshake within 5000 ms"
                + " (BrokerConfig.connectTimeout), and the port answers plain Redis (no TLS); the server may not speak TLS on this port:"
                + " use redis:// or the server's TLS port in BrokerConfig.url"))
                .isEqualTo("Binomic connects to its broker while the application starts: the server may not speak TLS on this port:"
                        + " use redis:// or the server's TLS port in binomic.broker.url.");
        assertThat(brokerFailure("Redis at 127.0.0.1:6412 refused database 99 (ERR DB index is out of range): it has 16, 0-15;"
                + " check the /database of BrokerConfig.url (or BrokerConfig.database)"))
                .isEqualTo("Binomic connects to its broker while the application starts: check the /database of binomic.broker.url (or binomic.broker.database).");
        assertThat(brokerFailure("cannot connect to Redis at 127.0.0.1:6499: Connection refused; is redis-server running?"
                + " check BrokerConfig.url"))
                .isEqualTo("Binomic connects to its broker while the application starts: start the broker, or point"
                        + " binomic.broker.url at one that runs.");
    }

    private static String brokerFailure(String message) {
        return new BinomicFailureAnalyzer(null).analyze(new org.springframework.beans.factory.BeanCreationException("binomic",
                "Error creating bean", new io.binomic.api.BrokerException(message))).getAction();
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
                    // Found by an outside tester: the report's action said "the setting named above" and named none.
                    FailureAnalysis analysis = new BinomicFailureAnalyzer(null).analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).isEqualTo("a dashboard bound to 0.0.0.0 is reachable from other hosts and"
                            + " needs a token: set binomic.dashboard.token (at least 16 random characters), or set"
                            + " binomic.dashboard.address to 127.0.0.1");
                    assertThat(analysis.getAction()).startsWith("Correct binomic.dashboard.token or binomic.dashboard.address");
                });
        runner.withPropertyValues("binomic.dashboard.enabled=true", "binomic.dashboard.address=0.0.0.0", "binomic.dashboard.port=0",
                "binomic.dashboard.token=0123456789abcdef0123", "binomic.dashboard.read-only=true").run(context -> {
                    Dashboard dashboard = context.getBean(Dashboard.class);
                    assertThat(dashboard.isReadOnly()).isTrue();
                    assertThat(dashboard.address().getAddress().isAnyLocalAddress()).isTrue();
                });
    }

    @Test
    void withoutHandlersOrQueuesNoWorkerRunsAndHealthSaysWhetherTheBrokerAnswers() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(Binomic.class);
            assertThat(context.getBean(BinomicWorkerLifecycle.class).isRunning()).isFalse();
            Health health = context.getBean(BinomicHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("state", "NOT_RUNNING").containsEntry("broker", "UP");
        });
    }

    /** A producer-only application still depends on its broker: its health says whether it can submit. */
    @Test
    void aProducerOnlyApplicationHasTheHealthComponent() {
        runner.withUserConfiguration(Handlers.class).withPropertyValues("binomic.worker.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(BinomicWorkerLifecycle.class);
            assertThat(context.getBean(BinomicHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UP);
        });
    }

    static final Task<Greeting, String> SLOW = Task.builder("slow", Greeting.class, String.class).queue("slow").build();
    static final java.util.concurrent.CountDownLatch SLOW_STARTED = new java.util.concurrent.CountDownLatch(1);

    @Configuration(proxyBeanMethods = false)
    static class SlowHandler {
        @Bean
        TaskBinding<Greeting, String> slow() {
            return SLOW.handledBy(g -> {
                SLOW_STARTED.countDown();
                Thread.sleep(60_000);
                return "late";
            });
        }
    }

    /**
     * Found by an outside tester: a drain that cut off its tasks logged only "stopped after N ms", the same as one
     * where every task finished; the core's stop line, which counts them, is lost with Boot's JUL bridge.
     */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void theDrainsLastLineCountsTheTasksCutOffByTheGrace(org.springframework.boot.test.system.CapturedOutput output) {
        runner.withUserConfiguration(SlowHandler.class).withPropertyValues("binomic.worker.poll-timeout=100ms",
                "binomic.worker.shutdown-grace=300ms").run(context -> {
                    context.getBean(Binomic.class).submit(SLOW, new Greeting("Ada"));
                    assertThat(SLOW_STARTED.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                });
        assertThat(output.toString()).contains("draining: 1 task(s) running, 0 outcome(s) held, waiting up to PT0.3S")
                .contains("1 task(s) cut off by the grace (interrupted and put back, attempt unchanged, unless counted in the outcomes not written)")
                .contains("0 outcome(s) not written");
    }

    @Test
    void theWorkerStopsWithTheContextAndTheClientCloses() {
        BinomicWorkerLifecycle[] lifecycle = new BinomicWorkerLifecycle[1];
        runner.withUserConfiguration(Handlers.class).run(context -> lifecycle[0] = context.getBean(BinomicWorkerLifecycle.class));
        assertThat(lifecycle[0].isRunning()).isFalse();
    }
}
