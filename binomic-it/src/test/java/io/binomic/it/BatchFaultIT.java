package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.WorkerConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Batches under faults: a worker JVM SIGKILLed and one frozen with SIGSTOP while each holds 8 of the
 * batch's 16 jobs (they are reclaimed and run again by another worker JVM, the frozen one woken after
 * the batch completed), on a single Redis and on a Redis Cluster (where the jobs' queue, the
 * callbacks' queue and the batch are in different slots); and Redis crashing mid-batch and coming
 * back from its append-only file while the workers keep their outcomes and send them again. Each
 * callback is still enqueued exactly once, after every job ended, with the counts right.
 */
class BatchFaultIT {
    private static final Duration LEASE = Duration.ofSeconds(3);

    /** What a callback run saw: its kind, the jobs done by then (the ledger), and the batch's status. */
    record Run(String kind, int doneWhenRun, BatchStatus status) { }

    /** Where the broker is; the ledger is on the shared single Redis either way. */
    enum Target {
        REDIS, CLUSTER;

        String brokerUrl() { return this == REDIS ? RedisServer.shared().url() : RedisClusterSet.shared().url(); }

        /** Commands the cluster refused with {@code CROSSSLOT} so far; none on a single Redis. */
        long crossSlotErrors() { return this == REDIS ? 0 : RedisClusterSet.shared().errors("CROSSSLOT"); }
    }

    @ParameterizedTest
    @EnumSource(Target.class)
    void workersKilledOrFrozenMidBatchLeaveEachCallbackEnqueuedOnceAfterTheLastJob(Target target) {
        RedisServer ledgerRedis = RedisServer.shared();
        String brokerUrl = target.brokerUrl();
        long crossSlotBefore = target.crossSlotErrors();
        String queue = "batch-kill-" + target.name().toLowerCase(java.util.Locale.ROOT) + "-" + UUID.randomUUID().toString().substring(0, 8);
        String callbacks = queue + "-cb";
        Ledger ledger = new Ledger(ledgerRedis.host(), ledgerRedis.port(), queue);
        Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
        Task<String, Void> callback = Task.builder("batch-callback", String.class).queue(callbacks).build();
        List<Run> runs = new CopyOnWriteArrayList<>();
        int count = 16;
        try (Binomic client = Binomic.builder().config(TestApp.config(brokerUrl, callbacks, LEASE)).task(job)
                .handle(callback, kind -> {
                    runs.add(new Run(kind, ledger.done().size(), TaskContext.current().batch().orElseThrow()));
                    return null;
                }).build().start()) {
            client.startWorker();
            BatchHandle batch;
            try (ChildWorker killed = ChildWorker.start(ledgerRedis, brokerUrl, queue, LEASE, Duration.ofMillis(100));
                 ChildWorker frozen = ChildWorker.start(ledgerRedis, brokerUrl, queue, LEASE, Duration.ofMillis(100))) {
                var builder = client.batch().onSuccess(callback, "success").onComplete(callback, "complete").onDeath(callback, "death");
                IntStream.range(0, count).forEach(n -> builder.add(job, new Job(n, 2500, 0)));
                batch = builder.submit();
                // each worker holds 8 (its concurrency) mid-task
                Await.until(Duration.ofSeconds(20), () -> ledger.attempts().size() >= count, () -> ledger.runs().toString());
                frozen.signal("STOP");
                killed.kill9();
                assertTrue(ledger.done().isEmpty(), "nothing finished before the kill");
                try (ChildWorker _ = ChildWorker.start(ledgerRedis, brokerUrl, queue, LEASE, Duration.ofMillis(100))) {
                    Await.until(Duration.ofSeconds(60), () -> runs.size() >= 2, () -> "done " + ledger.done() + ", callbacks " + runs);
                }
                // the frozen worker wakes up, finishes the runs it held and settles them late: fenced out, counted nowhere
                frozen.signal("CONT");
                RedisServer.sleep(3500);
            }
            assertEquals(IntStream.range(0, count).boxed().collect(Collectors.toSet()), ledger.done());
            assertEquals(2L * count, ledger.totalRuns(), "every job ran twice (on the killed or frozen worker, then again): "
                    + ledger.runs());
            assertEquals(Set.of("success", "complete"), runs.stream().map(Run::kind).collect(Collectors.toSet()));
            // a second enqueue of a callback would be a second entry, and a second run of its kind (the worker here does not die)
            assertEquals(2, runs.size(), "each callback ran once: " + runs);
            for (Run run : runs) {
                assertEquals(count, run.doneWhenRun(), "a callback runs after every job ended: " + run);
                assertEquals(count, run.status().succeeded(), "each job counted once: " + run.status());
                assertEquals(0, run.status().pending());
            }
            assertEquals(Set.of(BatchStatus.Callback.SUCCESS, BatchStatus.Callback.COMPLETE),
                    batch.status().orElseThrow().fired());
            assertEquals(count, batch.status().orElseThrow().succeeded(), "the frozen worker's late outcomes counted nothing");
            assertEquals(crossSlotBefore, target.crossSlotErrors(), "CROSSSLOT errors on the cluster");
            System.out.printf("BATCH %s sigkill-and-sigstop-mid-batch: jobs=%d executions=%d callbacks=%d%n", target, count,
                    ledger.totalRuns(), runs.size());
        }
    }

    @Test
    void redisCrashingMidBatchLeavesEachCallbackEnqueuedOnceAfterTheLastJob() {
        String queue = "batch-crash-" + UUID.randomUUID().toString().substring(0, 8);
        String callbacks = queue + "-cb";
        int count = 60;
        try (RedisServer own = RedisServer.startNew("--appendonly", "yes", "--appendfsync", "always")) {
            Ledger ledger = new Ledger(own.host(), own.port(), queue);
            Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
            Task<String, Void> callback = Task.builder("batch-callback", String.class).queue(callbacks).build();
            List<Run> runs = new CopyOnWriteArrayList<>();
            BinomicConfig config = BinomicConfig.builder().brokerUrl(own.url()).schedulePeriodicTasks(false)
                    .worker(WorkerConfig.builder().queues(queue, callbacks).concurrency(8).leaseTimeout(LEASE)
                            .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500)).build())
                    .build();
            try (Binomic client = Binomic.builder().config(config).handle(job, TestApp.handler(ledger))
                    .handle(callback, kind -> {
                        runs.add(new Run(kind, ledger.done().size(), TaskContext.current().batch().orElseThrow()));
                        return null;
                    }).build().start()) {
                client.startWorker();
                var builder = client.batch().onSuccess(callback, "success").onComplete(callback, "complete");
                IntStream.range(0, count).forEach(n -> builder.add(job, new Job(n, 30, 0)));
                BatchHandle batch = builder.submit();
                Await.until(Duration.ofSeconds(20), () -> ledger.done().size() >= 10, () -> ledger.done().size() + " done");
                own.crash();
                RedisServer.sleep(1500);
                own.start();
                Await.until(Duration.ofSeconds(60), () -> runs.size() >= 2, () -> ledger.done().size() + " done, callbacks " + runs);
                RedisServer.sleep(500); // room for a wrong third callback to show
                assertEquals(2, runs.size(), "each callback ran once: " + runs);
                assertEquals(Set.of("success", "complete"), runs.stream().map(Run::kind).collect(Collectors.toSet()));
                for (Run run : runs) {
                    assertEquals(count, run.doneWhenRun(), "a callback runs after every job ended: " + run);
                    assertEquals(count, run.status().succeeded(), "each job counted once: " + run.status());
                }
                assertEquals(count, batch.status().orElseThrow().total());
                System.out.printf("BATCH redis-crash-mid-batch: jobs=%d executions=%d callbacks=%d%n", count, ledger.totalRuns(),
                        runs.size());
            }
        }
    }
}
