package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A periodic tick reached late fires once, for the latest due tick, also when what held it up is
 * Redis: two clients fire an interval task through a Redis frozen for several periods (SIGSTOP:
 * their claims wait on the connection and run when it thaws, as calls retried through an outage
 * do when Redis is back). The claims of the ticks that fell due during the freeze must not fire
 * beside the tick due at the thaw (they did, in increasing order, so the claim took each one).
 * Redis and the test share the machine's clock, which the claims are judged by.
 */
class HeldUpTickIT {
    private static final Duration PERIOD = Duration.ofSeconds(1);
    private static final Duration FREEZE = Duration.ofMillis(3500);

    @Test
    void ticksHeldUpByAFrozenRedisDoNotFireBesideTheOneDueAtTheThaw() throws Exception {
        String queue = "held-tick-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Void, Void> task = Task.builder("tick").queue(queue).interval(PERIOD).build();
        String stream = "binomic:{" + queue + "}:stream";
        try (RedisServer redis = RedisServer.startNew()) {
            BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(true).build();
            List<Binomic> clients = new ArrayList<>();
            Instant frozenAt;
            Instant latestDueAtThaw;
            try {
                for (int i = 0; i < 2; i++) {
                    clients.add(Binomic.builder().config(config).task(task).build().start());
                }
                Await.until(Duration.ofSeconds(30), () -> (Long) redis.call("XLEN", stream) >= 1, () -> "no tick fired");
                redis.freeze();
                // After the stop took effect: no tick after this instant was claimed before the freeze.
                frozenAt = Instant.now();
                Thread.sleep(FREEZE.toMillis());
                // Before the thaw: every claim that runs from now on sees at least this time.
                Instant thawedAt = Instant.now();
                redis.thaw();
                latestDueAtThaw = Instant.ofEpochMilli(Math.floorDiv(thawedAt.toEpochMilli(), PERIOD.toMillis()) * PERIOD.toMillis());
                Await.until(Duration.ofSeconds(30), () -> ticks(redis, stream).stream().anyMatch(t -> !t.isBefore(latestDueAtThaw)),
                        () -> "no tick at or after " + latestDueAtThaw + ": " + ticks(redis, stream));
            } finally {
                clients.forEach(Binomic::close);
            }

            List<Instant> ticks = ticks(redis, stream);
            assertEquals(ticks.size(), ticks.stream().distinct().count(), "a tick was enqueued twice: " + ticks);
            List<Instant> heldUp = ticks.stream().filter(t -> t.isAfter(frozenAt) && t.isBefore(latestDueAtThaw)).toList();
            assertEquals(List.of(), heldUp, "ticks due during the freeze (" + frozenAt + " to " + latestDueAtThaw
                    + ") fired beside the latest: " + ticks);
        }
    }

    /** The tick of each message on the stream, in stream order. */
    private static List<Instant> ticks(RedisServer redis, String stream) {
        List<Instant> ticks = new ArrayList<>();
        for (Object entry : (List<?>) redis.call("XRANGE", stream, "-", "+")) {
            List<?> fields = (List<?>) ((List<?>) entry).get(1);
            String headers = (String) fields.get(fields.indexOf("headers") + 1);
            ticks.add(Instant.parse(headers.replaceAll(".*\"tick\":\"([^\"]+)\".*", "$1")));
        }
        return ticks;
    }
}
