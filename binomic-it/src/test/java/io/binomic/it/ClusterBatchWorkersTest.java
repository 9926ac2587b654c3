package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Batches end to end on a Redis Cluster: two workers, a batch's jobs on two queues in different hash
 * slots and its callbacks on a third, a job dead-lettered, and an open batch grown and closed. Each
 * callback runs once, after every job of its batch ended, and sees the batch's final counts.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterBatchWorkersTest {

    record Run(UUID batch, String kind, BatchStatus status) { }

    @Test
    void twoWorkersRunBatchesOverQueuesOfThreeSlotsAndEachCallbackRunsOnce() {
        RedisClusterSet cluster = RedisClusterSet.shared();
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String a = "cb-a-" + suffix;
        String b = pickOtherSlot(cluster, a, "cb-b-" + suffix);
        String callbacks = pickOtherSlot(cluster, a, pickOtherSlot(cluster, b, "cb-c-" + suffix));
        assertNotEquals(cluster.slotOf("{" + a + "}"), cluster.slotOf("{" + b + "}"));
        Task<Integer, Void> onA = Task.builder("job-a", Integer.class).queue(a).maxAttempts(1).build();
        Task<Integer, Void> onB = Task.builder("job-b", Integer.class).queue(b).maxAttempts(1).build();
        Task<String, Void> callback = Task.builder("callback", String.class).queue(callbacks).build();
        Map<Integer, AtomicInteger> ran = new ConcurrentHashMap<>();
        List<Run> runs = new CopyOnWriteArrayList<>();
        Binomic.Builder[] workers = new Binomic.Builder[2];
        for (int w = 0; w < 2; w++) {
            workers[w] = Binomic.builder().config(config(cluster, a, b, callbacks))
                    .handle(onA, n -> job(ran, n))
                    .handle(onB, n -> job(ran, n))
                    .handle(callback, kind -> {
                        runs.add(new Run(TaskContext.current().batchId().orElseThrow(), kind,
                                TaskContext.current().batch().orElseThrow()));
                        return null;
                    });
        }
        try (Binomic first = workers[0].build().start(); Binomic second = workers[1].build().start()) {
            first.startWorker();
            second.startWorker();
            var failing = first.batch().onSuccess(callback, "success").onComplete(callback, "complete").onDeath(callback, "death");
            var succeeding = second.batch().onSuccess(callback, "success").onComplete(callback, "complete");
            for (int n = 0; n < 20; n++) {
                failing.add(n % 2 == 0 ? onA : onB, n == 7 ? -n : n);
                succeeding.add(n % 2 == 0 ? onA : onB, 100 + n);
            }
            BatchHandle failed = failing.submit();
            BatchHandle succeeded = succeeding.submit();
            BatchHandle open = first.batch().keepOpen().add(onA, 200).onComplete(callback, "complete").submit();
            open.add(onB, 201);
            assertTrue(open.close());

            Await.until(Duration.ofSeconds(60), () -> runs.size() >= 5, () -> "callbacks " + runs);
            RedisServer.sleep(1500); // room for a wrong second run of a callback to show

            assertEquals(5, runs.size(), "each callback ran once: " + runs);
            assertEquals(Map.of("death", 1, "complete", 1), kinds(runs, failed.id()));
            assertEquals(Map.of("success", 1, "complete", 1), kinds(runs, succeeded.id()));
            assertEquals(Map.of("complete", 1), kinds(runs, open.id()));
            for (Run run : runs) {
                if (!run.kind().equals("death")) {
                    assertEquals(0, run.status().pending(), "a completion runs after every job ended: " + run);
                }
            }
            BatchStatus f = failed.status().orElseThrow();
            assertEquals(List.of(20, 19, 1), List.of(f.total(), f.succeeded(), f.deadLettered()));
            assertEquals(BatchStatus.State.FAILED, f.state());
            assertEquals(BatchStatus.State.SUCCEEDED, succeeded.status().orElseThrow().state());
            assertEquals(2, open.status().orElseThrow().succeeded());
            assertEquals(42, ran.size(), "every job ran: " + ran.keySet());
        }
    }

    private static Void job(Map<Integer, AtomicInteger> ran, int n) {
        ran.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
        if (n < 0) {
            throw new IllegalStateException("job " + n + " fails");
        }
        return null;
    }

    private static Map<String, Integer> kinds(List<Run> runs, UUID batch) {
        Map<String, Integer> out = new ConcurrentHashMap<>();
        runs.stream().filter(r -> r.batch().equals(batch)).forEach(r -> out.merge(r.kind(), 1, Integer::sum));
        return out;
    }

    private static String pickOtherSlot(RedisClusterSet cluster, String than, String base) {
        long slot = cluster.slotOf("{" + than + "}");
        for (int i = 0; ; i++) {
            String q = base + i;
            if (cluster.slotOf("{" + q + "}") != slot) {
                return q;
            }
        }
    }

    private static BinomicConfig config(RedisClusterSet cluster, String... queues) {
        return BinomicConfig.builder().brokerUrl(cluster.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queues).concurrency(4).leaseTimeout(Duration.ofSeconds(5))
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500)).build())
                .build();
    }
}
