package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A whole worker, connected as the worker ACL user of the documented rule sets, runs what a
 * producer connected as the producer user submits: successes, a retry that then succeeds, and
 * a job that fails for good, dead-lettered; a delayed job moved when due.
 */
class AclWorkerTest {
    private final RedisServer redis = AclRedis.shared();
    private final String queue = "acl-worker-" + UUID.randomUUID().toString().substring(0, 8);

    private BinomicConfig config(String user) {
        return BinomicConfig.builder().brokerUrl(AclRedis.url(redis, user)).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).build()).build();
    }

    @Test
    void aWorkerUserRunsWhatAProducerUserSubmits() throws Exception {
        AtomicInteger flakyRuns = new AtomicInteger();
        Task<String, String> echo = Task.builder("echo", String.class, String.class).queue(queue).build();
        Task<String, String> later = Task.builder("later", String.class, String.class).queue(queue)
                .delay(Duration.ofMillis(300)).build();
        Task<String, String> flaky = Task.builder("flaky", String.class, String.class).queue(queue).maxAttempts(2)
                .backoff(Backoff.fixed(Duration.ofMillis(100))).build();
        Task<String, String> broken = Task.builder("broken", String.class, String.class).queue(queue).maxAttempts(1).build();
        try (Binomic worker = Binomic.builder().config(config(AclRedis.WORKER))
                .handle(echo, s -> "echo " + s).handle(later, s -> "later " + s)
                .handle(flaky, s -> {
                    if (flakyRuns.incrementAndGet() == 1) {
                        throw new IllegalStateException("first try fails");
                    }
                    return "flaky " + s;
                })
                .handle(broken, s -> {
                    throw new IllegalStateException("always fails");
                }).build().start();
             Binomic producer = Binomic.builder().config(config(AclRedis.PRODUCER)).build().start()) {
            worker.startWorker();
            List<JobHandle<String>> echoes = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                echoes.add(producer.submit(echo, "m" + i));
            }
            JobHandle<String> delayed = producer.submit(later, "d");
            JobHandle<String> retried = producer.submit(flaky, "f");
            producer.submit(broken, "b");

            for (int i = 0; i < 5; i++) {
                assertEquals("echo m" + i, echoes.get(i).await(Duration.ofSeconds(15)));
            }
            assertEquals("later d", delayed.await(Duration.ofSeconds(15)));
            assertEquals("flaky f", retried.await(Duration.ofSeconds(15)));
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (worker.queueStats(queue).deadLetters() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(1, worker.queueStats(queue).deadLetters(), "the job that always fails is dead-lettered");
        }
    }
}
