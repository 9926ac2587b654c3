package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.BrokerOutOfMemoryException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Redis out of memory under {@code noeviction} ({@code maxmemory} below what it uses, so every
 * write that needs memory is refused): a submit fails with one line naming {@code maxmemory} and
 * saying the job was not enqueued, without the script's source; an outcome a worker could not
 * write meanwhile is kept and written once memory is freed: the job ends once, never run again.
 */
class RedisOutOfMemoryIT {
    private final RedisServer redis = RedisServer.startNew();
    private final String queue = "oom-" + UUID.randomUUID().toString().substring(0, 8);
    private final Task<String, String> tracked = Task.builder("tracked", String.class, String.class).queue(queue).build();
    private final Task<String, Void> untracked = Task.builder("untracked", String.class).queue(queue).build();

    @AfterEach
    void stop() {
        redis.close();
    }

    private BinomicConfig config() {
        return BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).leaseTimeout(Duration.ofSeconds(3))
                        .reclaimInterval(Duration.ofMillis(500)).build()).build();
    }

    private void memoryFull() {
        redis.call("CONFIG", "SET", "maxmemory", "1");
    }

    private void memoryFreed() {
        redis.call("CONFIG", "SET", "maxmemory", "0");
    }

    private static void assertClean(BrokerException e) {
        String m = e.getMessage();
        assertTrue(m.contains("is out of memory (maxmemory reached, OOM)") && m.contains("the job was not enqueued")
                && m.contains("raise maxmemory or free memory"), m);
        assertFalse(m.contains("redis.call") || m.contains("\n") || m.contains("channel:") || m.contains("params:"), m);
    }

    @Test
    void aSubmitRefusedForMemorySaysSoInOneLineAndEnqueuesNothing() {
        try (Binomic producer = Binomic.builder().config(config()).build().start()) {
            memoryFull();
            BrokerException trackedRefused = assertThrows(BrokerException.class, () -> producer.submit(tracked, "a"));
            BrokerException plainRefused = assertThrows(BrokerException.class, () -> producer.submit(untracked, "b"));
            memoryFreed();

            assertClean(trackedRefused);
            assertClean(plainRefused);
            assertTrue(trackedRefused instanceof BrokerOutOfMemoryException && plainRefused instanceof BrokerOutOfMemoryException);
            assertEquals(0, producer.queueStats(queue).ready(), "nothing was enqueued");
        }
    }

    @Test
    void anOutcomeRefusedForMemoryIsKeptAndWrittenOnceMemoryIsFreedAndTheJobRunsOnce() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        List<String> settlerLog = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                String text = record.getMessage() + " " + java.util.Arrays.toString(record.getParameters());
                if (text.contains("outcome")) {
                    settlerLog.add(text);
                }
            }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
        Logger settler = Logger.getLogger("io.binomic.core.internal.worker.Settler"); // held till the end: loggers are kept weakly
        settler.addHandler(capture);
        try (Binomic worker = Binomic.builder().config(config()).handle(tracked, s -> {
            runs.incrementAndGet();
            started.countDown();
            finish.await();
            return "done " + s;
        }).build().start()) {
            worker.startWorker();
            JobHandle<String> job = worker.submit(tracked, "a");
            assertTrue(started.await(10, TimeUnit.SECONDS));
            memoryFull();
            finish.countDown();
            // Longer than the lease and the worker's tries before it would give an outcome up.
            Thread.sleep(6_000);
            assertEquals(JobState.RUNNING, job.status().state(), "the outcome is not written while memory is full");
            memoryFreed();

            assertEquals("done a", job.await(Duration.ofSeconds(15)));
            Thread.sleep(4_000); // a lease and a reclaim round: a given-up outcome would run the job again
            assertEquals(1, runs.get(), "the job ran once");
            assertEquals(0, worker.queueStats(queue).pending(), "its delivery is acked");
            assertTrue(settlerLog.stream().anyMatch(l -> l.contains("keeping them and trying again") && l.contains("maxmemory")),
                    settlerLog.toString());
            assertTrue(settlerLog.stream().noneMatch(l -> l.contains("redis.call") || l.contains("giving up")), settlerLog.toString());
        } finally {
            settler.removeHandler(capture);
        }
    }
}
