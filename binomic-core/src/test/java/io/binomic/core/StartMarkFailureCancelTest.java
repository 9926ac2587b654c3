package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.JobUpdate;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A tracked job's handler runs only once its record says RUNNING. A job run although the broker
 * did not confirm its start mark looked queued to a cancel, which then ended it CANCELLED at once
 * and interrupted nobody, while its handler ran on unaware. Here the first start mark fails as a
 * Redis that did not answer in time does.
 */
class StartMarkFailureCancelTest {
    record Item(String name) { }

    private static final Task<Item, Void> TRACKED = Task.builder("tracked", Item.class).queue("marks")
            .keepStatusFor(Duration.ofMinutes(5)).build();

    private final MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
    private final AtomicInteger startMarks = new AtomicInteger();
    private final Broker firstStartMarkFails = new ForwardingBroker(memory) {
        @Override
        public Set<UUID> startJobs(List<JobUpdate> starts) {
            if (startMarks.incrementAndGet() == 1) {
                throw new BrokerException("Redis did not answer the start mark in time");
            }
            return super.startJobs(starts);
        }

        @Override
        public <T> Optional<T> capability(Class<T> type) {
            return type == Batches.class ? memory.capability(type) : super.capability(type);
        }
    };
    private final CountDownLatch entered = new CountDownLatch(1);
    private final AtomicReference<UUID> running = new AtomicReference<>();
    private final AtomicBoolean interrupted = new AtomicBoolean();
    private Binomic binomic;

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
    }

    /** A worker whose handler waits, up to 30 s, for an interrupt; with {@code rethrow} it then throws it, else it returns. */
    private void start(boolean rethrow) {
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("marks").pollTimeout(Duration.ofMillis(50)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        binomic = Binomic.builder().config(config).broker(firstStartMarkFails).scheduler(new MemoryScheduler(memory))
                .handle(TRACKED, item -> {
                    running.set(TaskContext.current().messageId());
                    entered.countDown();
                    try {
                        Thread.sleep(Duration.ofSeconds(30));
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                        if (rethrow) {
                            throw e;
                        }
                    }
                    return null;
                })
                .build().start();
        binomic.startWorker();
    }

    private JobStatus statusOfRunningJob() {
        return binomic.job("marks", running.get()).status();
    }

    @Test
    void aCancelledJobWhoseFirstStartMarkFailedIsInterruptedNotEndedBehindItsRunningHandler() throws Exception {
        start(true);
        JobHandle<Void> job = binomic.submit(TRACKED, new Item("one"));

        assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler never ran");
        assertEquals(JobState.RUNNING, job.status().state(), "its handler runs: its record must say so");
        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, job.cancel(), "its handler runs: the cancel must stop it");

        WorkerTest.await("the job ended", () -> job.status().state().isFinal());
        JobStatus status = job.status();
        assertEquals(JobState.CANCELLED, status.state());
        assertTrue(interrupted.get(), "the cancel interrupted the handler");
        assertEquals(1, status.attempt(), "the start that failed spent no attempt: " + status);
        assertEquals(2, startMarks.get(), "put back after the failed mark, it ran at the second");
    }

    @Test
    void aJobOfACancelledBatchWhoseFirstStartMarkFailedCountsByHowItsInterruptedHandlerEnded() throws Exception {
        start(false);
        BatchHandle batch = binomic.batch().add(TRACKED, new Item("one")).submit();

        assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler never ran");
        assertEquals(JobState.RUNNING, statusOfRunningJob().state(), "its handler runs: its record must say so");
        batch.cancel(); // the interrupt may end the handler at once: what counts is how the batch counts it below

        WorkerTest.await("the batch ended", () -> batch.status().map(s -> s.state() != BatchStatus.State.RUNNING).orElse(false));
        BatchStatus status = batch.status().orElseThrow();
        assertTrue(interrupted.get(), "the cancel interrupted the handler");
        assertEquals(1, status.succeeded(), "its handler returned: " + status);
        assertEquals(0, status.cancelled(), status.toString());
        JobStatus job = statusOfRunningJob();
        assertEquals(JobState.SUCCEEDED, job.state());
        assertTrue(job.cancelRequested(), job.toString());
    }
}
