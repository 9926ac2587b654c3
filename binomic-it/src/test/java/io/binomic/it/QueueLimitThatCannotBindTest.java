package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A queue concurrency limit equal to the worker's concurrency cannot bind: the worker never has more
 * deliveries than that. Jobs that end at once leave their outcomes unwritten for a moment, their
 * entries pending; an admission that counted those as running would take the binding path (record
 * slots, park jobs for a slot the limit has room for). Counted in the commands Redis ran, on a
 * server of its own: the binding path's ZCARD of the slots, and the ZADD of a slot or of a job parked for one.
 */
class QueueLimitThatCannotBindTest {
    private static final int JOBS = 3_000;

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.startNew();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    private static Map<String, Long> calls() {
        Map<String, Long> calls = new HashMap<>();
        for (String line : String.valueOf(redis.call("INFO", "commandstats")).split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                String n = line.substring(line.indexOf("calls=") + "calls=".length());
                calls.put(command, Long.parseLong(n.substring(0, n.indexOf(','))));
            }
        }
        return calls;
    }

    @Test
    void jobsThatEndAtOnceNeverPushTheAdmissionOntoTheBindingPath() throws Exception {
        String queue = "fast-" + UUID.randomUUID().toString().substring(0, 8);
        Task<LimitedApp.Work, Void> task = LimitedApp.task(queue, "none", 0);
        AtomicInteger ran = new AtomicInteger();
        try (Binomic producer = Binomic.builder().config(LimitedApp.config(redis.url(), queue, Duration.ofSeconds(30))).build().start()) {
            producer.queues().setLimits(queue, QueueLimits.builder().concurrencyLimit(8).build()); // the worker's concurrency
            producer.submitAll(task, Collections.nCopies(JOBS, new LimitedApp.Work(0, 0)));
            Map<String, Long> before = calls();
            try (Binomic worker = Binomic.builder().config(LimitedApp.config(redis.url(), queue, Duration.ofSeconds(30)))
                    .handle(task, work -> {
                        ran.incrementAndGet();
                        return null;
                    }).build().start()) {
                worker.startWorker();
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                while (ran.get() < JOBS && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
            }
            Map<String, Long> after = calls();
            assertEquals(JOBS, ran.get(), "every job ran once");
            long admissions = after.getOrDefault("evalsha", 0L) - before.getOrDefault("evalsha", 0L);
            System.out.println("LIMITS cannot-bind: " + JOBS + " jobs, " + admissions + " scripts, commands " + after);
            assertEquals(0L, after.getOrDefault("zcard", 0L) - before.getOrDefault("zcard", 0L),
                    "no admission counted the slots taken: each found no more pending than the limit allows");
            assertEquals(0L, after.getOrDefault("zadd", 0L) - before.getOrDefault("zadd", 0L),
                    "no slot was recorded, and no job was parked to wait for one");
        }
    }
}
