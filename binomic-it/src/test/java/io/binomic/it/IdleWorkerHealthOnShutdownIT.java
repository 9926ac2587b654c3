package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * An idle worker's health while its Redis is shut down (connections refused): the age it gives is the outage's, from
 * the first call that failed, whichever of its calls (fetch, reclaim) the reason names, and never starts again while
 * Redis stays down.
 */
class IdleWorkerHealthOnShutdownIT {
    private static final Pattern AGE = Pattern.compile(" for (\\d+) s");

    @Test
    void theOutagesAgeNeverRestartsWhileRedisStaysDown() throws Exception {
        try (RedisServer redis = RedisServer.startNew()) {
            WorkerConfig worker = WorkerConfig.builder().queues("idle").concurrency(5).pollTimeout(Duration.ofSeconds(1))
                    .build();
            BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).worker(worker).build();
            Task<Integer, Void> job = Task.builder("job", Integer.class).queue("idle").build();
            try (Binomic binomic = Binomic.builder().config(config).handle(job, (Integer n) -> null).build().start()) {
                Worker running = binomic.startWorker();
                Await.until(Duration.ofSeconds(20), () -> running.health().state() == WorkerHealth.State.CONSUMING,
                        () -> "not consuming: " + running.health());
                Thread.sleep(1500);
                long downAt = System.nanoTime();
                redis.stop();
                List<String> seen = new ArrayList<>();
                long lastAge = -1;
                while (since(downAt) < 16_000) {
                    WorkerHealth health = running.health();
                    long outage = since(downAt);
                    if (health.state() == WorkerHealth.State.BROKER_UNREACHABLE) {
                        String problem = health.problem().orElseThrow();
                        Matcher age = AGE.matcher(problem);
                        assertTrue(age.find(), problem);
                        long shown = Long.parseLong(age.group(1));
                        seen.add(outage + " ms: " + problem);
                        assertTrue(shown >= lastAge, "the age went back while Redis stayed down: " + String.join("\n", seen));
                        // the first call that failed began within a poll timeout of the shutdown; 2 s of slack for a loaded machine
                        assertTrue(shown * 1000 >= outage - 1000 - 1000 - 2000, "the outage is " + outage + " ms old: "
                                + String.join("\n", seen));
                        lastAge = shown;
                    } else if (outage > 2000 + 1000 + 2000) {
                        seen.add(outage + " ms: " + health);
                        throw new AssertionError("not BROKER_UNREACHABLE with Redis down: " + String.join("\n", seen));
                    }
                    Thread.sleep(100);
                }
                assertTrue(lastAge >= 10, String.join("\n", seen));
                System.out.println("IDLE WORKER OUTAGE: " + seen.getLast());
            }
        }
    }

    private static long since(long nanos) { return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos); }
}
