package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.BatchHandle;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Redis numbers each stream's entries on its own, so two queues written in the same millisecond
 * (a batch across queues always is) hold entries with equal ids. A worker reading both must keep
 * them apart: renew both leases, settle each once, and never take one for the other.
 */
class SameEntryIdsOnTwoQueuesIT {
    private final RedisServer redis = RedisServer.startNew();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String qa = "ids-a-" + suffix;
    private final String qb = "ids-b-" + suffix;

    @AfterEach
    void stop() {
        redis.close();
    }

    @Test
    void longJobsWithEqualEntryIdsOnTwoQueuesEachRunOnceAndSucceed() throws Exception {
        Task<Integer, Void> onA = Task.builder("on-a", Integer.class, Void.class).queue(qa).maxAttempts(1).build();
        Task<Integer, Void> onB = Task.builder("on-b", Integer.class, Void.class).queue(qb).maxAttempts(1).build();
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        // The jobs of one queue end at once, those of the other run past the lease: a delivery taken
        // for its twin on the other queue is forgotten with it, then reclaimed and, with one attempt,
        // dead-lettered.
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(qa, qb).concurrency(8).leaseTimeout(Duration.ofSeconds(2))
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(300)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(onA, i -> sleepCounting(runs, "a" + i, 4_000))
                .handle(onB, i -> sleepCounting(runs, "b" + i, 200))
                .build().start()) {
            var builder = binomic.batch();
            for (int i = 0; i < 4; i++) {
                builder.add(onA, i).add(onB, i);
            }
            BatchHandle batch = builder.submit();
            binomic.startWorker();

            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Optional<BatchStatus> status = batch.status();
            while (status.orElseThrow().pending() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
                status = batch.status();
            }
            assertEquals(8, status.orElseThrow().succeeded(), "every job succeeded: " + status + ", runs " + runs);
            assertEquals(0, binomic.queueStats(qa).deadLetters() + binomic.queueStats(qb).deadLetters(), "runs " + runs);
            assertEquals(8, runs.size(), runs.toString());
            runs.forEach((job, count) -> assertEquals(1, count.get(), job + " ran " + count + " times: " + runs));
        }
    }

    private static Void sleepCounting(Map<String, AtomicInteger> runs, String job, long millis) throws InterruptedException {
        runs.computeIfAbsent(job, j -> new AtomicInteger()).incrementAndGet();
        Thread.sleep(millis);
        return null;
    }
}
