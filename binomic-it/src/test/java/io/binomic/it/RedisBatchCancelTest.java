package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.core.Binomic;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A batch cancel on a real Redis counts each job by how its handler ended, with a worker. */
class RedisBatchCancelTest {

    @Test
    void aJobWhoseHandlerReturnedCountsSucceededThoughItsBatchWasCancelledMeanwhile() throws Exception {
        String queue = "batch-cancel-" + UUID.randomUUID().toString().substring(0, 8);
        Task<String, Void> selfCancelling = Task.builder("self-cancelling", String.class).queue(queue).maxAttempts(1).build();
        Task<String, Void> report = Task.builder("report", String.class).queue(queue + "-reports").build();
        AtomicReference<Binomic> self = new AtomicReference<>();
        LinkedBlockingQueue<BatchStatus> seen = new LinkedBlockingQueue<>();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url()).schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(selfCancelling, s -> {
                    // Cancelled once its record says RUNNING: the start mark is written after the fetch, and a
                    // cancel that lands before it ends the job as a queued one, though its handler runs.
                    UUID id = TaskContext.current().messageId();
                    long marked = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (self.get().job(queue, id).status().state() != JobState.RUNNING
                            && System.nanoTime() < marked) {
                        Thread.sleep(10);
                    }
                    self.get().batch(TaskContext.current().batchId().orElseThrow()).cancel();
                    // the cancel's interrupt comes over pub/sub; the handler then returns: its work is done
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    return null;
                })
                .handle(report, r -> {
                    seen.add(TaskContext.current().batch().orElseThrow());
                    return null;
                })
                .build().start()) {
            self.set(binomic);
            binomic.startWorker();
            binomic.batch().add(selfCancelling, "a").onComplete(report, "done").submit();
            BatchStatus s = seen.poll(30, TimeUnit.SECONDS);
            assertTrue(s != null && s.cancelRequested(), String.valueOf(s));
            assertEquals(1, s.succeeded(), "its handler returned: " + s);
            assertEquals(0, s.cancelled());
        }
    }
}
