package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobCancelledException;
import io.binomic.api.JobFailedException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.NonRetryableException;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Tracked jobs on the in-memory broker: status, result, failure, progress and cancel through the handle. */
class JobHandleLifecycleTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic started(Binomic.Builder builder) {
        WorkerConfig worker = WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic binomic = builder.config(BinomicConfig.builder().worker(worker).build()).codec(new TextCodec()).build().start();
        opened.add(binomic);
        return binomic;
    }

    @Test
    void aDeadLetteredJobFailsItsAwaitNamingTheReason() {
        Task<String, String> doomed = Task.builder("doomed", String.class, String.class).build();
        Binomic binomic = started(Binomic.builder().handle(doomed, s -> {
            throw new NonRetryableException("card declined");
        }));
        binomic.startWorker();

        JobHandle<String> job = binomic.submit(doomed, "x");

        var e = assertThrows(JobFailedException.class, () -> job.await(WAIT));
        assertEquals(job.id(), e.jobId());
        assertTrue(e.getMessage().contains("NON_RETRYABLE") && e.getMessage().contains("card declined"), e.getMessage());
        JobStatus status = job.status();
        assertEquals(JobState.DEAD_LETTERED, status.state());
        assertEquals(DeadLetterReason.NON_RETRYABLE, status.deadLetterReason().orElseThrow());
        assertTrue(status.error().orElseThrow().contains("card declined"), status.toString());
    }

    @Test
    void aJobStillRunningTimesOutItsAwaitAndGoesOn() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Task<String, String> slow = Task.builder("slow", String.class, String.class).build();
        Binomic binomic = started(Binomic.builder().handle(slow, s -> {
            release.await();
            return s + "!";
        }));
        binomic.startWorker();

        JobHandle<String> job = binomic.submit(slow, "x");

        assertThrows(JobTimeoutException.class, () -> job.await(Duration.ofMillis(300)));
        release.countDown();
        assertEquals("x!", job.await(WAIT));
        assertEquals(JobState.SUCCEEDED, job.status().state());
    }

    @Test
    void aScheduledJobCancelledBeforeItsTimeNeverRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Task<String, String> later = Task.builder("later", String.class, String.class).delay(Duration.ofMillis(500)).build();
        Binomic binomic = started(Binomic.builder().handle(later, s -> {
            runs.incrementAndGet();
            return s;
        }));
        binomic.startWorker();

        JobHandle<String> job = binomic.submit(later, "x");
        assertEquals(JobState.SCHEDULED, job.status().state());

        assertEquals(JobHandle.CancelOutcome.CANCELLED, job.cancel());
        assertThrows(JobCancelledException.class, () -> job.await(WAIT));
        Thread.sleep(1000);
        assertEquals(0, runs.get(), "a cancelled job never runs");
        assertEquals(JobState.CANCELLED, job.status().state());
        assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, job.cancel());
        WorkerTest.await("its message was settled", () -> binomic.queueStats("default").pending() == 0
                && binomic.queueStats("default").delayed() == 0 && binomic.queueStats("default").ready() == 0);
    }

    @Test
    void aRunningJobCancelledIsInterruptedAndEndsCancelledNeitherRetriedNorDeadLettered() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Task<String, String> stubborn = Task.builder("stubborn", String.class, String.class).build();
        Binomic binomic = started(Binomic.builder().handle(stubborn, s -> {
            runs.incrementAndGet();
            started.countDown();
            Thread.sleep(Duration.ofSeconds(30));
            return s;
        }));
        Worker worker = binomic.startWorker();

        JobHandle<String> job = binomic.submit(stubborn, "x");
        assertTrue(started.await(10, TimeUnit.SECONDS));
        assertEquals(JobState.RUNNING, job.status().state());

        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, job.cancel());
        assertThrows(JobCancelledException.class, () -> job.await(WAIT));
        assertEquals(JobState.CANCELLED, job.status().state());
        WorkerTest.await("its delivery was settled", () -> binomic.queueStats("default").pending() == 0);
        Thread.sleep(300);
        assertEquals(1, runs.get());
        assertEquals(0, binomic.queueStats("default").deadLetters());
        assertEquals(0, binomic.queueStats("default").delayed(), "no retry");
        assertEquals(0, worker.counters().retried());
        var counted = io.binomic.core.internal.CoreAccess.get().stats(binomic).cancellations();
        assertEquals(java.util.Map.of(List.of("default", "stubborn"), 1L), counted, "counted as cancelled, for /metrics");
        assertEquals(0, binomic.taskStats().getFirst().failed(), "not as a failure");
    }

    @Test
    void progressReportedByTheHandlerShowsInTheStatus() throws Exception {
        CountDownLatch reported = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Task<String, Void> work = Task.builder("work", String.class).keepStatusFor(Duration.ofMinutes(5)).build();
        Binomic binomic = started(Binomic.builder().handle(work, s -> {
            TaskContext.current().progress(40, "halfway-ish");
            reported.countDown();
            release.await();
            return null;
        }));
        binomic.startWorker();

        JobHandle<Void> job = binomic.submit(work, "x");
        assertTrue(reported.await(10, TimeUnit.SECONDS));
        WorkerTest.await("the progress was recorded", () -> job.status().progress().isPresent());
        JobStatus running = job.status();
        assertEquals(JobState.RUNNING, running.state());
        assertEquals(40, running.progress().getAsInt());
        assertEquals("halfway-ish", running.progressNote().orElseThrow());
        release.countDown();

        assertEquals(null, job.await(WAIT), "a Void task kept by keepStatusFor completes with null");
        assertEquals(JobState.SUCCEEDED, job.status().state());
    }

    @Test
    void aRetriedJobShowsEachAttempt() {
        AtomicInteger calls = new AtomicInteger();
        Task<String, Integer> flaky = Task.builder("flaky", String.class, Integer.class)
                .backoff(io.binomic.api.Backoff.fixed(Duration.ofMillis(50))).build();
        Binomic binomic = started(Binomic.builder().handle(flaky, s -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("not yet");
            }
            return TaskContext.current().attempt();
        }));
        binomic.startWorker();

        JobHandle<Integer> job = binomic.submit(flaky, "x");

        assertEquals(2, job.await(WAIT));
        JobStatus status = job.status();
        assertEquals(2, status.attempt());
        assertEquals(2, status.attempts().size(), status.attempts().toString());
        assertFalse(status.cancelRequested());
    }
}
