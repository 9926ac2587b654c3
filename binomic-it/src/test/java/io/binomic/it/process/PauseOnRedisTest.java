package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.it.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Pause on a real Redis as operators use it: two workers on two queues under a steady stream of
 * jobs, one queue paused (from Java and from the CLI); a pause that holds for the workers of its
 * own JVM when it returns; the state kept across a Redis restart (from its append-only file) and a
 * worker restart.
 */
class PauseOnRedisTest {
    record Job(int n) { }

    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String mail = "mail-" + suffix;
    private final String reports = "reports-" + suffix;
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic instance(RedisServer redis, Binomic.Builder builder) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(mail, reports).concurrency(4).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(5)).build())
                .build();
        Binomic binomic = builder.config(config).build().start();
        opened.add(binomic);
        return binomic;
    }

    @Test
    void everyWorkerStopsStartingAPausedQueueWithinASecondWhileTheOtherRunsAndItsRunningJobFinishes() throws Exception {
        RedisServer redis = RedisServer.shared();
        Task<Job, Void> send = Task.builder("send", Job.class).queue(mail).build();
        Task<Job, Void> render = Task.builder("render", Job.class).queue(reports).build();
        Task<Job, String> slow = Task.builder("slow", Job.class, String.class).queue(mail).build();
        ConcurrentLinkedQueue<Long> mailStarts = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Long> reportStarts = new ConcurrentLinkedQueue<>();
        for (int w = 0; w < 2; w++) {
            instance(redis, Binomic.builder()
                    .handle(send, j -> {
                        mailStarts.add(System.nanoTime());
                        return null;
                    })
                    .handle(render, j -> {
                        reportStarts.add(System.nanoTime());
                        return null;
                    })
                    .handle(slow, j -> {
                        Thread.sleep(1500);
                        return "finished";
                    })).startWorker();
        }
        Binomic producer = instance(redis, Binomic.builder());
        Thread feeder = Thread.ofPlatform().start(() -> {
            for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                producer.submit(send, new Job(i));
                producer.submit(render, new Job(i));
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try {
            Thread.sleep(1000);
            JobHandle<String> running = producer.submit(slow, new Job(0));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (running.status().state() != JobState.RUNNING && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertEquals(JobState.RUNNING, running.status().state());

            long paused = System.nanoTime();
            producer.queues().pause(mail);
            Thread.sleep(2500);
            long lastMailStart = mailStarts.stream().mapToLong(Long::longValue).max().orElseThrow();
            long stoppedAfterMs = TimeUnit.NANOSECONDS.toMillis(lastMailStart - paused);
            System.out.println("last job of the paused queue started " + stoppedAfterMs + " ms after pause() returned");
            assertTrue(stoppedAfterMs < 1000, "a job of the paused queue started " + stoppedAfterMs + " ms after the pause");
            long secondAfter = paused + TimeUnit.SECONDS.toNanos(1);
            // the feeder submits one every 20 ms: a loaded machine takes longer to run 10 of them, never forever
            until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (reportStarts.stream().filter(t -> t > secondAfter).count() <= 10 && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            assertTrue(reportStarts.stream().filter(t -> t > secondAfter).count() > 10, "the other queue runs on");
            assertEquals("finished", running.await(Duration.ofSeconds(10)), "the job running at the pause finished");

            long resumed = System.nanoTime();
            producer.queues().resume(mail);
            until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (mailStarts.stream().noneMatch(t -> t > resumed) && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertTrue(mailStarts.stream().anyMatch(t -> t > resumed), "resume starts the queue again");
        } finally {
            feeder.interrupt();
            feeder.join();
        }
    }

    @Test
    void whenPauseReturnsNoWorkerOfAnyInstanceInTheJvmStartsTheQueuesJobs() throws Exception {
        RedisServer redis = RedisServer.shared();
        Task<Job, String> send = Task.builder("send", Job.class, String.class).queue(mail).build();
        for (int w = 0; w < 2; w++) {
            instance(redis, Binomic.builder().handle(send, j -> "sent " + j.n())).startWorker();
        }
        Binomic producer = instance(redis, Binomic.builder());
        assertEquals("sent 100", producer.submit(send, new Job(100)).await(Duration.ofSeconds(20)), "the workers run");
        for (int round = 0; round < 5; round++) {
            producer.queues().pause(mail);
            assertTrue(producer.queues().isPaused(mail));
            List<JobHandle<String>> jobs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                jobs.add(producer.submit(send, new Job(round * 10 + i)));
            }
            Thread.sleep(700);
            for (JobHandle<String> job : jobs) {
                assertEquals(JobState.QUEUED, job.status().state(), "round " + round + ": a job submitted after pause() returned started");
            }
            producer.queues().resume(mail);
            for (int i = 0; i < 3; i++) {
                assertEquals("sent " + (round * 10 + i), jobs.get(i).await(Duration.ofSeconds(20)));
            }
        }
    }

    @Test
    void thePausedStateSurvivesARedisRestartAndAWorkerRestart() throws Exception {
        try (RedisServer redis = RedisServer.startNew("--appendonly", "yes")) {
            Task<Job, String> send = Task.builder("send", Job.class, String.class).queue(mail).build();
            Binomic first = instance(redis, Binomic.builder().handle(send, j -> "sent " + j.n()));
            first.queues().pause(mail);
            first.queues().pauseTask(reports, "render");
            first.close();

            redis.stop();
            redis.start();

            Binomic restarted = instance(redis, Binomic.builder().handle(send, j -> "sent " + j.n()));
            assertTrue(restarted.queues().isPaused(mail), "paused after a Redis restart");
            assertTrue(restarted.queues().isTaskPaused(reports, "render"));
            restarted.startWorker();
            JobHandle<String> job = restarted.submit(send, new Job(1));
            Thread.sleep(1500);
            assertEquals(JobState.QUEUED, job.status().state(), "the restarted worker does not run the paused queue");

            restarted.queues().resume(mail);
            assertEquals("sent 1", job.await(Duration.ofSeconds(20)));
        }
    }

    /**
     * Found by an outside tester: the jobs of a paused task that a worker fetched and parked were counted as DELAYED,
     * as if a due time would bring them back; they are PARKED, apart from the jobs delayed for a time.
     */
    @Test
    void theJobsAPausedTaskHoldsAreCountedAsParkedNotDelayed() throws Exception {
        RedisServer redis = RedisServer.shared();
        Task<Job, String> render = Task.builder("render", Job.class, String.class).queue(reports).build();
        Binomic worker = instance(redis, Binomic.builder().handle(render, j -> "rendered " + j.n()));
        worker.queues().pauseTask(reports, "render");
        worker.startWorker();
        List<JobHandle<String>> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(worker.submit(render, new Job(i)));
        }
        worker.submit(render, new Job(9), SubmitOptions.builder().delay(Duration.ofHours(1)).build());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (worker.queues().parked(reports) < 3 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(3, worker.queues().parked(reports), "the worker parked the paused task's jobs");
        assertEquals(4, worker.queueStats(reports).delayed(), "the broker's own count has them among the delayed");

        CliRun queues = CliRun.of("queues", "--queues", reports, "--broker", redis.url());
        assertEquals(0, queues.exit(), queues.toString());
        assertTrue(queues.out().split("\n")[1].matches(reports + " +0 +0 +1 +3 +0 +\\d+ +task:render +-"), queues.out());

        worker.queues().resumeTask(reports, "render");
        // a worker whose view of the pause is up to a refresh old may park a freed job once more; it unparks it at the
        // refresh that sees the resume, so the promise is that the jobs run, not that none is parked the moment resume returns
        for (int i = 0; i < 3; i++) {
            assertEquals("rendered " + i, held.get(i).await(Duration.ofSeconds(20)), "resumed job " + i + " ran");
        }
        assertEquals(0, worker.queues().parked(reports), "resumed and run: none parked");
        assertEquals(1, worker.queueStats(reports).delayed(), "the job delayed for an hour stays delayed");
    }

    @Test
    void theCliPausesAndResumesAQueueOrATaskAndQueuesShowsIt() {
        RedisServer redis = RedisServer.shared();
        CliRun pause = CliRun.of("queue", "pause", mail, "--broker", redis.url(), "--create");
        assertEquals(0, pause.exit(), pause.toString());
        assertEquals("paused queue " + mail + " on broker " + redis.url() + "\n", pause.out());
        // a queue no worker has read on this Redis (no consumer group): the pause holds back nobody there
        assertTrue(pause.err().startsWith("binomic queue pause: warning: no worker has read queue '" + mail + "' on broker " + redis.url()
                + " (it has no consumer group there)"), pause.toString());
        CliRun pauseTask = CliRun.of("queue", "pause", reports, "--task", "render", "--broker", redis.url(), "--create");
        assertEquals(0, pauseTask.exit(), pauseTask.toString());

        CliRun queues = CliRun.of("queues", "--queues", mail + "," + reports, "--broker", redis.url());
        assertEquals(0, queues.exit(), queues.toString());
        String[] lines = queues.out().split("\n");
        assertTrue(lines[0].matches(".* PAUSED +LIMITS"), queues.out());
        assertTrue(lines[1].startsWith(mail) && lines[1].matches(".* yes +-"), queues.out());
        assertTrue(lines[2].startsWith(reports) && lines[2].matches(".* task:render +-"), queues.out());

        CliRun resume = CliRun.of("queue", "resume", mail, "--broker", redis.url());
        assertEquals(0, resume.exit(), resume.toString());
        CliRun resumeTask = CliRun.of("queue", "resume", "--queue", reports, "--task", "render", "--broker", redis.url());
        assertEquals(0, resumeTask.exit(), resumeTask.toString());
        // --create: once resumed, nothing of the fresh queue is left in Redis to know it by
        CliRun again = CliRun.of("queue", "resume", mail, "--broker", redis.url(), "--create");
        assertEquals(1, again.exit(), "a resume that changed nothing: " + again);
        assertEquals("binomic queue resume: queue " + mail + " was not paused on broker " + redis.url() + "; nothing changed\n", again.err());
        CliRun after = CliRun.of("queues", "--queues", mail + "," + reports, "--broker", redis.url());
        assertFalse(after.out().contains("yes") || after.out().contains("task:"), after.out());

        CliRun noName = CliRun.of("queue", "pause", "--broker", redis.url());
        assertEquals(2, noName.exit(), noName.toString());
        assertTrue(noName.err().contains("name the queue: binomic queue pause NAME"), noName.toString());
    }
}
