package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A batch cancel on a real Redis counts each job by how its handler ended, with a worker. */
class RedisBatchCancelTest {

    /**
     * The batch is cancelled from outside the handler: a handler cancelling its own batch can be
     * interrupted by that cancel while it still waits for the cancel's reply from Redis, and then
     * throws (its job counts as cancelled, rightly), which is not what this test is about.
     */
    @Test
    void aJobWhoseHandlerReturnedCountsSucceededThoughItsBatchWasCancelledMeanwhile() throws Exception {
        String queue = "batch-cancel-" + UUID.randomUUID().toString().substring(0, 8);
        Task<String, Void> waitsForItsCancel = Task.builder("waits-for-its-cancel", String.class).queue(queue).maxAttempts(1).build();
        Task<String, Void> report = Task.builder("report", String.class).queue(queue + "-reports").build();
        CountDownLatch entered = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        LinkedBlockingQueue<BatchStatus> seen = new LinkedBlockingQueue<>();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url()).schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(waitsForItsCancel, s -> {
                    entered.countDown();
                    // the cancel's interrupt comes over pub/sub; the handler then returns: its work is done
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    interrupted.set(Thread.currentThread().isInterrupted());
                    return null;
                })
                .handle(report, r -> {
                    seen.add(TaskContext.current().batch().orElseThrow());
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            BatchHandle batch = binomic.batch().add(waitsForItsCancel, "a").onComplete(report, "done").submit();
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler never ran");
            batch.cancel();
            BatchStatus s = seen.poll(30, TimeUnit.SECONDS);
            assertTrue(s != null && s.cancelRequested(), String.valueOf(s));
            assertTrue(interrupted.get(), "the cancel interrupted the handler");
            assertEquals(1, s.succeeded(), "its handler returned: " + s);
            assertEquals(0, s.cancelled());
        }
    }

    /**
     * A job whose first start mark Redis did not confirm is put back, its attempt unspent, and runs
     * once its record says RUNNING: the batch cancel then interrupts its handler, rather than ending
     * the job as a queued one while the handler runs on unaware.
     */
    @Test
    void aJobWhoseStartMarkFailedRunsOnlyMarkedSoTheBatchCancelInterruptsItsHandler() throws Exception {
        String queue = "batch-cancel-" + UUID.randomUUID().toString().substring(0, 8);
        Task<String, Void> waitsForItsCancel = Task.builder("waits-for-its-cancel", String.class).queue(queue).maxAttempts(1).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        FirstStartMarkFailsBroker broker = new FirstStartMarkFailsBroker(Brokers.redis(RedisServer.shared()));
        CountDownLatch entered = new CountDownLatch(1);
        AtomicReference<UUID> running = new AtomicReference<>();
        AtomicBoolean interrupted = new AtomicBoolean();
        try (Binomic binomic = Binomic.builder().config(config).broker(broker)
                .handle(waitsForItsCancel, s -> {
                    running.set(TaskContext.current().messageId());
                    entered.countDown();
                    try {
                        Thread.sleep(Duration.ofSeconds(30));
                    } catch (InterruptedException e) {
                        interrupted.set(true); // and returns: its work is done
                    }
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            BatchHandle batch = binomic.batch().add(waitsForItsCancel, "a").submit();

            assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler never ran");
            assertEquals(JobState.RUNNING, binomic.job(queue, running.get()).status().state(), "its handler runs: its record must say so");
            batch.cancel();
            assertEquals(JobState.RUNNING, binomic.job(queue, running.get()).status().state(),
                    "its handler runs: the cancel must not end it behind its back");

            Await.until(Duration.ofSeconds(20), () -> batch.status().map(b -> b.state() != BatchStatus.State.RUNNING).orElse(false),
                    () -> String.valueOf(batch.status()));
            BatchStatus s = batch.status().orElseThrow();
            assertTrue(interrupted.get(), "the cancel interrupted the handler");
            assertEquals(1, s.succeeded(), "its handler returned: " + s);
            assertEquals(0, s.cancelled(), s.toString());
            assertEquals(JobState.SUCCEEDED, binomic.job(queue, running.get()).status().state());
            assertEquals(2, broker.startMarks(), "put back after the failed mark, it ran at the second");
        }
    }
}
