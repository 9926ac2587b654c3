package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class MasterConfigTest {

    private MasterConfig.Builder valid() {
        return MasterConfig.builder().brokerUrl("redis://localhost:6379");
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        MasterConfig config = valid().build();
        assertEquals(Runtime.getRuntime().availableProcessors(), config.workers());
        assertEquals(5, config.concurrency());
        assertEquals(Duration.ofSeconds(5), config.heartbeatInterval());
        assertEquals(Duration.ofSeconds(15), config.heartbeatTimeout(), "3 x the interval");
        assertEquals(Duration.ofSeconds(60), config.startTimeout());
        assertEquals(Duration.ofSeconds(10), config.shutdownGrace());
        assertEquals(Duration.ofSeconds(5), config.killGrace());
        assertEquals(Duration.ofSeconds(30), config.leaseTimeout());
        assertEquals(Duration.ofSeconds(10), config.reclaimInterval());
        assertEquals(Duration.ofSeconds(1), config.restartBackoffInitial());
        assertEquals(Duration.ofSeconds(60), config.restartBackoffMax());
        assertEquals(List.of(), config.queues());
        assertEquals(MasterConfig.defaultStateDirectory(), config.stateDirectory());
    }

    @Test
    void heartbeatTimeoutFollowsAChangedInterval() {
        assertEquals(Duration.ofMillis(600), valid().heartbeatInterval(Duration.ofMillis(200)).build().heartbeatTimeout());
    }

    /** A short lease alone is valid: the poll and the reclaim period left at their defaults follow it. */
    @Test
    void pollAndReclaimPeriodsLeftAtTheirDefaultsFollowAShortLease() {
        MasterConfig shortLease = valid().leaseTimeout(Duration.ofSeconds(1)).build();
        assertEquals(Duration.ofMillis(500), shortLease.pollTimeout());
        assertEquals(Duration.ofMillis(500), shortLease.reclaimInterval());
        assertEquals(shortLease.pollTimeout(), shortLease.workerConfig().pollTimeout());
        assertEquals(shortLease.reclaimInterval(), shortLease.workerConfig().reclaimInterval());
        MasterConfig given = valid().leaseTimeout(Duration.ofSeconds(1)).reclaimInterval(Duration.ofSeconds(20)).build();
        assertEquals(Duration.ofSeconds(20), given.reclaimInterval(), "a period given is kept");
        MasterConfig defaults = valid().build();
        assertEquals(Duration.ofSeconds(1), defaults.pollTimeout());
        assertEquals(Duration.ofSeconds(10), defaults.reclaimInterval());
    }

    @Test
    void invalidValuesNameTheField() {
        assertMessage("brokerUrl must be a URL such as redis://localhost:6379, was 'null'", MasterConfig.builder());
        assertMessage("workers must be 1..1024, was 0", valid().workers(0));
        assertMessage("concurrency must be >= 1, was 0", valid().concurrency(0));
        assertMessage("heartbeatInterval must be positive, was PT0S", valid().heartbeatInterval(Duration.ZERO));
        assertMessage("heartbeatTimeout must be at least twice heartbeatInterval (PT5S), was PT6S",
                valid().heartbeatTimeout(Duration.ofSeconds(6)));
        assertMessage("killGrace must be positive, was PT-1S", valid().killGrace(Duration.ofSeconds(-1)));
        assertMessage("leaseTimeout must be longer than pollTimeout (PT1S), was PT1S",
                valid().pollTimeout(Duration.ofSeconds(1)).leaseTimeout(Duration.ofSeconds(1)));
        assertMessage("shutdownGrace must not be negative, was PT-1S", valid().shutdownGrace(Duration.ofSeconds(-1)));
        assertMessage("restartBackoffMax (PT0.5S) must not be shorter than restartBackoffInitial (PT1S)",
                valid().restartBackoffMax(Duration.ofMillis(500)));
        assertMessage("queues: 'a b' is not a valid queue name (1-200 of letters, digits, '_', '.', ':', '-')",
                valid().queues(List.of("a b")));
        assertMessage("pollTimeout must be positive, was PT0S", valid().pollTimeout(Duration.ZERO));
        assertMessage("leaseTimeout must be longer than pollTimeout (PT5S), was PT4S",
                valid().pollTimeout(Duration.ofSeconds(5)).leaseTimeout(Duration.ofSeconds(4)));
        assertMessage("jvmOptions give -Xmx more than once (-Xmx1g, -Xmx2g), and the JVM would take the last one silently: keep one",
                valid().jvmOptions(List.of("-Xmx1g", "-XX:+UseZGC", "-Xmx2g")));
        assertMessage("brokerUrl and broker are both set: give the URL inside broker",
                valid().broker(BrokerConfig.builder().url("redis://other:6379").build()));
    }

    @Test
    void brokerSettingsAndTaskDefaultsAreCarriedWholeForTheWorkers() {
        BrokerConfig broker = BrokerConfig.builder().url("redis://cache:6379").keyPrefix("shop").maxPayloadBytes(1024)
                .options(java.util.Map.of("redisson.config", "/etc/redisson.yaml")).build();
        TaskDefaults tasks = TaskDefaults.builder().maxAttempts(9).build();
        MasterConfig config = MasterConfig.builder().broker(broker).taskDefaults(tasks).queues(List.of("q")).concurrency(3)
                .pollTimeout(Duration.ofMillis(500)).build();
        assertEquals(broker, config.broker());
        assertEquals(tasks, config.taskDefaults());
        assertEquals(WorkerConfig.builder().queues("q").concurrency(3).pollTimeout(Duration.ofMillis(500)).build(),
                config.workerConfig());
        assertEquals(TaskDefaults.defaults(), valid().build().taskDefaults(), "defaults to TaskDefaults.defaults()");
        assertEquals("binomic", valid().build().broker().keyPrefix(), "brokerUrl alone: other broker settings at their defaults");
    }

    /** A setting given twice (a default, then an override) is a mistake: which one was meant? */
    @Test
    void everySettingGivenTwiceIsRefusedNamingTheField() {
        Duration d = Duration.ofSeconds(20);
        Map<String, Consumer<MasterConfig.Builder>> once = new LinkedHashMap<>();
        once.put("brokerUrl", b -> b.brokerUrl("redis://other:6379"));
        once.put("broker", b -> b.broker(BrokerConfig.defaults()));
        once.put("taskDefaults", b -> b.taskDefaults(TaskDefaults.defaults()));
        once.put("pollTimeout", b -> b.pollTimeout(d));
        once.put("queues", b -> b.queues(List.of("q")));
        once.put("workers", b -> b.workers(2));
        once.put("concurrency", b -> b.concurrency(2));
        once.put("heartbeatInterval", b -> b.heartbeatInterval(d));
        once.put("heartbeatTimeout", b -> b.heartbeatTimeout(d));
        once.put("startTimeout", b -> b.startTimeout(d));
        once.put("shutdownGrace", b -> b.shutdownGrace(d));
        once.put("killGrace", b -> b.killGrace(d));
        once.put("leaseTimeout", b -> b.leaseTimeout(d));
        once.put("reclaimInterval", b -> b.reclaimInterval(d));
        once.put("restartBackoffInitial", b -> b.restartBackoffInitial(d));
        once.put("restartBackoffMax", b -> b.restartBackoffMax(d));
        once.put("stateDirectory", b -> b.stateDirectory(Path.of("/tmp/state")));
        once.put("jvmOptions", b -> b.jvmOptions(List.of("-Xmx64m")));
        once.forEach((field, setter) -> {
            MasterConfig.Builder builder = MasterConfig.builder();
            setter.accept(builder);
            String message = assertThrows(IllegalArgumentException.class, () -> setter.accept(builder), field).getMessage();
            assertTrue(message.startsWith(field + " is set twice ("), message);
        });
        assertEquals("workers is set twice (2, then 8); set it once",
                assertThrows(IllegalArgumentException.class, () -> valid().workers(2).workers(8)).getMessage());
        assertEquals("brokerUrl is set twice (a URL, then a URL); set it once",
                assertThrows(IllegalArgumentException.class, () -> valid().brokerUrl("redis://:secret@cache:6379")).getMessage(),
                "the URL may hold a password");
    }

    private static void assertMessage(String message, MasterConfig.Builder builder) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, builder::build).getMessage());
    }

    @Test
    void restartBackoffIsImmediateThenDoublesUpToTheCap() {
        RestartBackoff backoff = new RestartBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60));
        List<Long> seconds = java.util.stream.IntStream.rangeClosed(1, 9).mapToObj(backoff::delay)
                .map(Duration::toSeconds).toList();
        assertEquals(List.of(0L, 1L, 2L, 4L, 8L, 16L, 32L, 60L, 60L), seconds);
        assertEquals(Duration.ofSeconds(60), backoff.delay(Integer.MAX_VALUE), "no overflow after very many failures");
    }

    @Test
    void brokerPasswordIsRedactedInLogs() {
        assertEquals("redis://****@cache:6379/0", Master.redacted("redis://user:secret@cache:6379/0"));
        assertEquals("redis://cache:6379", Master.redacted("redis://cache:6379"));
    }
}
