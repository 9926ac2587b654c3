package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every invalid setting is rejected when built, with a message that names the field. */
class ConfigValidationTest {

    static Stream<Arguments> invalidSettings() {
        return Stream.of(
                invalid("maxAttempts", () -> TaskDefaults.builder().maxAttempts(0).build()),
                invalid("taskTimeout", () -> TaskDefaults.builder().taskTimeout(Duration.ZERO).build()),
                invalid("taskTimeout", () -> TaskDefaults.builder().taskTimeout(Duration.ofSeconds(-1)).build()),
                invalid("staleAfter", () -> TaskDefaults.builder().staleAfter(Duration.ZERO).build()),
                invalid("backoff.base", () -> Backoff.exponential(Duration.ZERO, 2, Duration.ofSeconds(1))),
                invalid("backoff.factor", () -> Backoff.exponential(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(2))),
                invalid("backoff.factor", () -> Backoff.exponential(Duration.ofSeconds(1), Double.NaN, Duration.ofSeconds(2))),
                invalid("backoff.cap", () -> Backoff.exponential(Duration.ofSeconds(2), 2, Duration.ofSeconds(1))),
                invalid("backoff.jitter", () -> Backoff.DEFAULT.withJitter(1.5)),
                invalid("concurrency", () -> WorkerConfig.builder().concurrency(0).build()),
                invalid("shutdownGrace", () -> WorkerConfig.builder().shutdownGrace(Duration.ofSeconds(-1)).build()),
                invalid("leaseTimeout", () -> WorkerConfig.builder().leaseTimeout(Duration.ZERO).build()),
                invalid("pollTimeout", () -> WorkerConfig.builder().pollTimeout(Duration.ZERO).build()),
                invalid("pollTimeout", () -> WorkerConfig.builder().pollTimeout(Duration.ofSeconds(40)).build()),
                invalid("reclaimInterval", () -> WorkerConfig.builder().reclaimInterval(Duration.ZERO).build()),
                invalid("queues", () -> WorkerConfig.builder().queues("ok", "not ok").build()),
                invalid("consumerName", () -> WorkerConfig.builder().consumerName("a b").build()),
                invalid("url", () -> BrokerConfig.builder().url("localhost:6379").build()),
                invalid("url", () -> BrokerConfig.builder().url(null).build()),
                invalid("database", () -> BrokerConfig.builder().database(-1).build()),
                invalid("connectTimeout", () -> BrokerConfig.builder().connectTimeout(Duration.ZERO).build()),
                invalid("commandTimeout", () -> BrokerConfig.builder().commandTimeout(Duration.ZERO).build()),
                invalid("keyPrefix", () -> BrokerConfig.builder().keyPrefix("has space").build()),
                invalid("maxPayloadBytes", () -> BrokerConfig.builder().maxPayloadBytes(0).build()),
                invalid("deadLetterMaxCount", () -> BrokerConfig.builder().deadLetterMaxCount(0).build()),
                invalid("deadLetterMaxAge", () -> BrokerConfig.builder().deadLetterMaxAge(Duration.ZERO).build()),
                invalid("payloadCodec", () -> BinomicConfig.builder().payloadCodec(null).build()),
                invalid("payloadCodec", () -> BinomicConfig.builder().payloadCodec("").build()),
                invalid("payloadCodec", () -> BinomicConfig.builder().payloadCodec("json jdk").build()),
                invalid("payloadCodec", () -> BinomicConfig.builder().payloadCodec("jackson").payloadCodec("json-jdk").build()));
    }

    private static Arguments invalid(String field, Supplier<?> build) {
        return Arguments.of(field, Named.of(field, build));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidSettings")
    void invalidValueIsRejectedNamingTheField(String field, Supplier<?> build) {
        var e = assertThrows(IllegalArgumentException.class, build::get);
        assertTrue(e.getMessage().startsWith(field + " ") || e.getMessage().contains(field + " must"),
                "message should name '" + field + "': " + e.getMessage());
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        TaskDefaults task = TaskDefaults.defaults();
        assertEquals(3, task.maxAttempts());
        assertEquals(Duration.ofSeconds(600), task.taskTimeout());
        assertEquals(Backoff.exponential(Duration.ofMillis(1500), 2, Duration.ofSeconds(30)), task.backoff());
        assertEquals(Optional.empty(), task.staleAfter());
        WorkerConfig worker = WorkerConfig.defaults();
        assertEquals(5, worker.concurrency());
        assertEquals(Duration.ofSeconds(10), worker.shutdownGrace());
        assertEquals(Duration.ofSeconds(30), worker.leaseTimeout());
        assertEquals(Duration.ofSeconds(1), worker.pollTimeout());
        assertEquals(Duration.ofSeconds(10), worker.reclaimInterval());
        BrokerConfig broker = BrokerConfig.defaults();
        assertEquals("memory://", broker.url());
        assertEquals("memory", broker.scheme());
        assertEquals("binomic", broker.keyPrefix());
        assertTrue(BinomicConfig.defaults().schedulePeriodicTasks());
        assertEquals("json-jdk", BinomicConfig.defaults().payloadCodec());
    }

    /** A short lease alone is valid, and stranded messages are looked for at least twice a lease. */
    @Test
    void pollAndReclaimPeriodsLeftAtTheirDefaultsFollowAShortLease() {
        WorkerConfig shortLease = WorkerConfig.builder().leaseTimeout(Duration.ofSeconds(1)).build();
        assertEquals(Duration.ofMillis(500), shortLease.pollTimeout());
        assertEquals(Duration.ofMillis(500), shortLease.reclaimInterval());
        WorkerConfig given = WorkerConfig.builder().leaseTimeout(Duration.ofSeconds(4)).reclaimInterval(Duration.ofSeconds(10)).build();
        assertEquals(Duration.ofSeconds(10), given.reclaimInterval(), "a period given is kept");
        assertEquals(Duration.ofSeconds(1), given.pollTimeout());
        assertThrows(IllegalArgumentException.class,
                () -> WorkerConfig.builder().leaseTimeout(Duration.ofSeconds(1)).pollTimeout(Duration.ofSeconds(1)).build(),
                "a poll given as long as the lease is still refused");
    }

    @Test
    void defaultBackoffFollowsTheReferenceSchedule() {
        long[] expectedMillis = {1500, 3000, 6000, 12000, 24000, 30000, 30000};
        for (int attempt = 1; attempt <= expectedMillis.length; attempt++) {
            assertEquals(expectedMillis[attempt - 1], Backoff.DEFAULT.delay(attempt).toMillis(), "attempt " + attempt);
        }
    }

    @Test
    void jitterOnlyShortensTheWait() {
        Backoff jittered = Backoff.DEFAULT.withJitter(0.5);
        var random = new java.util.Random(42);
        for (int i = 0; i < 1000; i++) {
            long ms = jittered.delay(2, random).toMillis();
            assertTrue(ms >= 1500 && ms <= 3000, "jittered wait out of [1500, 3000]: " + ms);
        }
    }

    @Test
    void passwordsNeverAppearInToString() {
        BrokerConfig config = BrokerConfig.builder().url("redis://app:s3cret@localhost:6379/0").password("hunter2").build();
        assertFalse(config.toString().contains("s3cret"), config.toString());
        assertFalse(config.toString().contains("hunter2"), config.toString());
        assertEquals("redis://app:****@localhost:6379/0", config.redactedUrl());
    }
}
