package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A worker whose queue's stream vanished (evicted, deleted by hand) while it read it: its next
 * read finds no group, and it creates the stream and the group again (MKSTREAM), so the jobs
 * submitted after run.
 */
class StreamDeletedRecoveryTest {
    record Job(int n) { }

    @Test
    void aWorkerRunsTheJobsSubmittedAfterItsQueuesStreamWasDeleted() throws Exception {
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
        }
    }
}
