package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A worker whose queue's stream vanished (evicted, deleted by hand) while it read it: its blocked
 * read is ended by Redis, and it creates the stream and the group again (MKSTREAM) at once, with
 * no failed fetch, so the jobs submitted after run.
 */
class StreamDeletedRecoveryTest {
    record Job(int n) { }

    @Test
    void aWorkerRunsTheJobsSubmittedAfterItsQueuesStreamWasDeleted() throws Exception {
        List<String> fetchFailures = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (String.valueOf(r.getMessage()).contains("fetching failed")) {
                    fetchFailures.add(Arrays.toString(r.getParameters()));
                }
            }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
        Logger binomicLog = Logger.getLogger("io.binomic");
        binomicLog.addHandler(capture);
        RedisServer redis = RedisServer.shared();
        String queue = "evicted-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Job, String> echo = Task.builder("echo", Job.class, String.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config).handle(echo, j -> "ran " + j.n()).build().start()) {
            binomic.startWorker();
            assertEquals("ran 1", binomic.submit(echo, new Job(1)).await(Duration.ofSeconds(20)), "the worker runs");

            String stream = "binomic:{" + queue + "}:stream";
            assertEquals(1L, Resp.call(redis.host(), redis.port(), "DEL", stream), "the stream existed");
            Thread.sleep(500); // the worker reads the missing stream at least once

            assertEquals("ran 2", binomic.submit(echo, new Job(2)).await(Duration.ofSeconds(30)), "a job submitted after runs");
            assertEquals(1L, Resp.call(redis.host(), redis.port(), "XINFO", "GROUPS", stream) instanceof List<?> g ? (long) g.size() : -1L,
                    "the group is back on the stream");
            assertEquals(List.of(), fetchFailures, "a read blocked on the deleted stream is a vanished group, not a failed fetch");
        } finally {
            binomicLog.removeHandler(capture);
        }
    }
}
