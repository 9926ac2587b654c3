package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import io.binomic.it.BatchFaultIT.Run;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A batch on a Redis Cluster under worker faults: one worker JVM SIGKILLed and one frozen with SIGSTOP,
 * each holding 8 of the batch's 16 jobs, the frozen one woken after the batch completed. The jobs'
 * queue, the callbacks' queue and the batch are in different slots. Each callback is enqueued once,
 * after every job ended, and the frozen worker's late outcomes count nothing.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterBatchFaultIT {
    private static final Duration LEASE = Duration.ofSeconds(3);

    @Test
    void workersKilledOrFrozenMidBatchLeaveEachCallbackEnqueuedOnceAfterTheLastJob() {
        RedisClusterSet cluster = RedisClusterSet.shared();
        RedisServer ledgerRedis = RedisServer.shared();
        String queue = "cluster-batch-kill-" + UUID.randomUUID().toString().substring(0, 8);
        String callbacks = queue + "-cb";
        Ledger ledger = new Ledger(ledgerRedis.host(), ledgerRedis.port(), queue);
        Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
        Task<String, Void> callback = Task.builder("batch-callback", String.class).queue(callbacks).build();
        List<Run> runs = new CopyOnWriteArrayList<>();
        int count = 16;
        try (Binomic client = Binomic.builder().config(TestApp.config(cluster.url(), callbacks, LEASE)).task(job)
                .handle(callback, kind -> {
                    runs.add(new Run(kind, ledger.done().size(), TaskContext.current().batch().orElseThrow()));
                    return null;
                }).build().start()) {
            client.startWorker();
            BatchHandle batch;
            try (ChildWorker killed = ChildWorker.start(ledgerRedis, cluster.url(), queue, LEASE, Duration.ofMillis(100));
                 ChildWorker frozen = ChildWorker.start(ledgerRedis, cluster.url(), queue, LEASE, Duration.ofMillis(100))) {
                var builder = client.batch().onSuccess(callback, "success").onComplete(callback, "complete").onDeath(callback, "death");
                IntStream.range(0, count).forEach(n -> builder.add(job, new Job(n, 2500, 0)));
                batch = builder.submit();
                Await.until(Duration.ofSeconds(20), () -> ledger.attempts().size() >= count, () -> ledger.runs().toString());
                frozen.signal("STOP");
                killed.kill9();
                assertTrue(ledger.done().isEmpty(), "nothing finished before the kill");
                try (ChildWorker _ = ChildWorker.start(ledgerRedis, cluster.url(), queue, LEASE, Duration.ofMillis(100))) {
                    Await.until(Duration.ofSeconds(60), () -> runs.size() >= 2, () -> "done " + ledger.done() + ", callbacks " + runs);
                }
                frozen.signal("CONT");
                RedisServer.sleep(3500);
            }
            assertEquals(IntStream.range(0, count).boxed().collect(Collectors.toSet()), ledger.done());
            assertEquals(Set.of("success", "complete"), runs.stream().map(Run::kind).collect(Collectors.toSet()));
            assertEquals(2, runs.size(), "each callback ran once: " + runs);
            for (Run run : runs) {
                assertEquals(count, run.doneWhenRun(), "a callback runs after every job ended: " + run);
                assertEquals(count, run.status().succeeded(), "each job counted once: " + run.status());
                assertEquals(0, run.status().pending());
            }
            assertEquals(Set.of(BatchStatus.Callback.SUCCESS, BatchStatus.Callback.COMPLETE), batch.status().orElseThrow().fired());
            assertEquals(count, batch.status().orElseThrow().succeeded(), "the frozen worker's late outcomes counted nothing");
            System.out.printf("CLUSTER BATCH sigkill-and-sigstop-mid-batch: jobs=%d executions=%d callbacks=%d%n", count,
                    ledger.totalRuns(), runs.size());
        }
    }
}
