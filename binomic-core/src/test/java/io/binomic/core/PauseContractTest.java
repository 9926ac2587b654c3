package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Pause, resume and drain, the same on every broker: a paused queue's jobs do not start while
 * another queue's run on; a pause holds for the workers of its own process when it returns; a
 * paused task's messages are parked without using an attempt and run after resume; a running job
 * finishes; drain waits for it.
 */
public abstract class PauseContractTest {

    record Item(int n) { }

    protected PauseContractTest() {
    }

    /** The broker URL the instances use. */
    protected abstract String brokerUrl();

    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String mail = "mail-" + suffix;
    private final String reports = "reports-" + suffix;
    private final Task<Item, String> send = Task.builder("send", Item.class, String.class).queue(mail).build();
    private final Task<Item, String> bounce = Task.builder("bounce", Item.class, String.class).queue(mail).build();
    private final Task<Item, String> report = Task.builder("report", Item.class, String.class).queue(reports).build();
    private final Map<String, Integer> attempts = new ConcurrentHashMap<>();
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic started(Binomic.Builder builder) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(brokerUrl())
                .worker(WorkerConfig.builder().queues(mail, reports).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic binomic = builder.config(config).build().start();
        opened.add(binomic);
        return binomic;
    }

    private Binomic withHandlers() {
        return started(Binomic.builder()
                .handle(send, i -> record("send", i))
                .handle(bounce, i -> record("bounce", i))
                .handle(report, i -> record("report", i)));
    }

    private String record(String task, Item i) {
        attempts.put(task + i.n(), TaskContext.current().attempt());
        return task + i.n();
    }

    /** Longer than a worker takes to see a pause (it reads the state every 500 ms). */
    private static void letWorkersSeeIt() throws InterruptedException {
        Thread.sleep(1200);
    }

    @Test
    void aPausedQueueStartsNothingWhileAnotherQueueRunsAndResumeRunsItsJobs() throws Exception {
        Binomic binomic = withHandlers();
        binomic.queues().pause(mail);
        assertTrue(binomic.queues().isPaused(mail));
        assertFalse(binomic.queues().isPaused(reports));
        binomic.startWorker();
        letWorkersSeeIt();

        List<JobHandle<String>> mails = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            mails.add(binomic.submit(send, new Item(i)));
        }
        assertEquals("report1", binomic.submit(report, new Item(1)).await(Duration.ofSeconds(20)));
        Thread.sleep(500);
        assertTrue(mails.stream().noneMatch(j -> j.status().state() == JobState.SUCCEEDED), "a paused queue's job ran");
        assertEquals(5, binomic.queueStats(mail).ready(), "they wait on their queue");

        binomic.queues().resume(mail);
        assertFalse(binomic.queues().isPaused(mail));
        for (JobHandle<String> job : mails) {
            job.await(Duration.ofSeconds(20));
        }
    }

    @Test
    void noJobSubmittedAfterPauseReturnsStartsOnAWorkerOfTheSameProcess() throws Exception {
        Binomic binomic = withHandlers();
        binomic.startWorker();
        assertEquals("send100", binomic.submit(send, new Item(100)).await(Duration.ofSeconds(20)), "the worker runs");
        for (int round = 0; round < 5; round++) {
            binomic.queues().pause(mail);
            JobHandle<String> job = binomic.submit(send, new Item(round));
            Thread.sleep(700);
            assertEquals(JobState.QUEUED, job.status().state(), "round " + round + ": a job submitted after pause() returned started");
            binomic.queues().resume(mail);
            assertEquals("send" + round, job.await(Duration.ofSeconds(20)), "round " + round + ": it runs after resume");
        }
    }

    @Test
    void noJobOfATaskPausedAloneStartsOnceItsPauseReturns() throws Exception {
        Binomic binomic = withHandlers();
        binomic.startWorker();
        assertEquals("bounce100", binomic.submit(bounce, new Item(100)).await(Duration.ofSeconds(20)), "the worker runs");
        for (int round = 0; round < 5; round++) {
            binomic.queues().pauseTask(mail, "bounce");
            JobHandle<String> job = binomic.submit(bounce, new Item(round));
            Thread.sleep(700);
            assertEquals(JobState.QUEUED, job.status().state(), "round " + round + ": a job submitted after pauseTask() returned started");
            binomic.queues().resumeTask(mail, "bounce");
            assertEquals("bounce" + round, job.await(Duration.ofSeconds(20)), "round " + round + ": it runs after resume");
        }
    }

    @Test
    void aPausedTasksMessagesAreParkedWithoutUsingAnAttemptAndRunAfterResume() throws Exception {
        Binomic binomic = withHandlers();
        binomic.queues().pauseTask(mail, "bounce");
        assertEquals(Set.of("bounce"), binomic.queues().pausedTasks(mail));
        assertTrue(binomic.queues().isTaskPaused(mail, "bounce"));
        assertFalse(binomic.queues().isPaused(mail), "only the task is paused");
        binomic.startWorker();
        letWorkersSeeIt();

        JobHandle<String> parked = binomic.submit(bounce, new Item(7));
        assertEquals("send1", binomic.submit(send, new Item(1)).await(Duration.ofSeconds(20)), "the queue's other task runs");
        Thread.sleep(500);
        assertEquals(JobState.QUEUED, parked.status().state(), "a parked job is still queued, not failed");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (binomic.queues().parked(mail) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(1, binomic.queues().parked(mail), "counted as parked");
        assertEquals(1, binomic.queueStats(mail).delayed(), "and, in the broker's own count, among the delayed");

        binomic.queues().resumeTask(mail, "bounce");
        assertEquals(0, binomic.queues().parked(mail), "a resume leaves none parked");
        assertEquals("bounce7", parked.await(Duration.ofSeconds(20)));
        assertEquals(1, attempts.get("bounce7"), "parking used no attempt");
    }

    @Test
    void aRunningJobFinishesAfterThePauseAndDrainWaitsForIt() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Task<Item, String> slow = Task.builder("slow", Item.class, String.class).queue(mail).build();
        Binomic binomic = started(Binomic.builder().handle(slow, i -> {
            running.countDown();
            finish.await();
            return "done";
        }).handle(report, i -> "r"));
        binomic.startWorker();
        JobHandle<String> job = binomic.submit(slow, new Item(1));
        assertTrue(running.await(20, TimeUnit.SECONDS));

        assertFalse(binomic.queues().drain(mail, Duration.ofMillis(1500)), "a job is still running");
        assertTrue(binomic.queues().isPaused(mail), "drain pauses the queue");
        finish.countDown();
        assertEquals("done", job.await(Duration.ofSeconds(20)), "the running job finished");
        assertTrue(binomic.queues().drain(mail, Duration.ofSeconds(20)));
        binomic.queues().resume(mail);
    }

    @Test
    void aDrainWithANegativeTimeoutIsRefusedAndLeavesTheQueueRunning() {
        Binomic binomic = started(Binomic.builder());
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> binomic.queues().drain(mail, Duration.ofSeconds(-1)));
        assertTrue(e.getMessage().startsWith("drain timeout must be zero or positive, was PT-1S"), e.getMessage());
        assertFalse(binomic.queues().isPaused(mail), "a refused drain paused nothing");
    }

    @Test
    void pauseAndResumeAreIdempotentAndResumingTheQueueLeavesPausedTasksPaused() {
        Binomic binomic = started(Binomic.builder());
        binomic.queues().pause(mail);
        binomic.queues().pause(mail);
        binomic.queues().pauseTask(mail, "bounce");
        binomic.queues().resume(mail);
        binomic.queues().resume(mail);
        assertFalse(binomic.queues().isPaused(mail));
        assertEquals(Set.of("bounce"), binomic.queues().pausedTasks(mail));
        binomic.queues().resumeTask(mail, "bounce");
        assertEquals(Set.of(), binomic.queues().pausedTasks(mail));
    }
}
