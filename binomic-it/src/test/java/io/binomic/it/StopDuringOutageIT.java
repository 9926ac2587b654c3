package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.internal.worker.WorkerRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker stopped while Redis is down and it holds the outcomes of tasks that finished meanwhile.
 * Its stop writes them from the moment it begins, so a Redis back within the grace gets them all (no
 * task runs again); a Redis that stays down costs at most the worker's stop budget (the grace plus
 * {@link WorkerRuntime#STOP_BEYOND_GRACE}, what its master allows before killing it), and the worker
 * says how many outcomes it could not write, the same number in its error and in its last line.
 */
class StopDuringOutageIT {
    private static final int JOBS = 3;
    private static final Duration GRACE = Duration.ofSeconds(6);
    /** Scheduling and logging on a loaded machine; the stop's own plan is the budget. */
    private static final Duration SLACK = Duration.ofMillis(1500);

    record Job(int n) { }

    private final CapturedCoreLog log = new CapturedCoreLog();
    private final Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private RedisServer redis;
    private Binomic binomic;
    private String queue;

    @BeforeEach
    void start() {
        log.attach();
        redis = RedisServer.startNew();
        queue = "stop-outage-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void close() {
        log.detach();
        if (binomic != null) {
            binomic.close();
        }
        redis.close();
    }

    /** A worker holding the outcomes of {@code JOBS} tasks that finished after Redis went down. */
    private Worker workerHoldingOutcomes() throws InterruptedException {
        Task<Job, Void> task = Task.builder("hold", Job.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).concurrency(JOBS).leaseTimeout(Duration.ofSeconds(2))
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500)).shutdownGrace(GRACE).build())
                .build();
        binomic = Binomic.builder().config(config).handle(task, job -> {
            runs.computeIfAbsent(job.n(), n -> new AtomicInteger()).incrementAndGet();
            release.await();
            return null;
        }).build().start();
        binomic.submitAll(task, IntStream.range(0, JOBS).mapToObj(Job::new).toList());
        Worker worker = binomic.startWorker();
        Await.until(Duration.ofSeconds(20), () -> worker.counters().inFlight() == JOBS, () -> worker.counters().toString());
        redis.stop();
        release.countDown();
        Await.until(Duration.ofSeconds(20), () -> worker.counters().held() == JOBS, () -> worker.counters().toString());
        return worker;
    }

    /** Stops {@code worker} with the grace, on a thread of its own; returns that thread, started at the call. */
    private static Thread stopping(Worker worker) {
        return Thread.ofPlatform().name("stopping").start(() -> worker.stop(GRACE));
    }

    private Duration budget() { return WorkerRuntime.stopBudget(GRACE).plus(SLACK); }

    /** The worker's last line. */
    private String stoppedLine() {
        return log.lines().stream().filter(l -> l.contains(" stopped in ")).reduce((a, b) -> b).orElse("(no stopped line)");
    }

    @Test
    void outcomesHeldAtStopAreWrittenWhenRedisComesBackWithinTheGrace() throws Exception {
        Worker worker = workerHoldingOutcomes();
        long began = System.nanoTime();
        Thread stop = stopping(worker);
        Thread.sleep(2500);
        redis.start();
        stop.join(budget().plusSeconds(20).toMillis());
        Duration took = Duration.ofNanos(System.nanoTime() - began);

        assertTrue(took.compareTo(budget()) < 0, "the stop took " + took + ", more than its budget; log:\n" + log.toString());
        QueueStats stats = binomic.queueStats(queue);
        assertEquals(0, stats.pending(), "every outcome written: " + stats + "; log:\n" + log.toString());
        assertEquals(0, stats.ready(), stats.toString());
        runs.forEach((n, count) -> assertEquals(1, count.get(), "job " + n + " ran once"));
        assertTrue(log.lines().stream().noneMatch(l -> l.contains("could not be written")), log.toString());
        assertTrue(stoppedLine().contains(" 0 outcome(s) not written"), "last line: " + stoppedLine());
    }

    @Test
    void outcomesHeldAtStopAreGivenUpWithinTheBudgetWhenRedisStaysDown() throws Exception {
        Worker worker = workerHoldingOutcomes();
        long began = System.nanoTime();
        Thread stop = stopping(worker);
        stop.join(budget().plusSeconds(30).toMillis());
        Duration took = Duration.ofNanos(System.nanoTime() - began);

        assertTrue(took.compareTo(budget()) < 0, "the stop took " + took + ", more than its budget; log:\n" + log.toString());
        List<String> errors = log.lines().stream().filter(l -> l.contains("could not be written")).toList();
        assertEquals(1, errors.size(), log.toString());
        assertTrue(errors.getFirst().contains(": " + JOBS + " outcome(s) could not be written"), errors.getFirst());
        assertTrue(stoppedLine().contains(" " + JOBS + " outcome(s) not written"), "last line: " + stoppedLine());
        assertTrue(stoppedLine().contains("run again after reclaim"), "last line: " + stoppedLine());
        assertEquals(0, worker.counters().held(), "given up, so no longer held: " + worker.counters());

        // As the worker's JVM would exit: a client left open may still land a write its stop gave up on (a retry of the
        // client's own), acknowledging a delivery counted as not written, which then does not run again.
        binomic.close();
        binomic = null;
        redis.start();
        List<?> summary = (List<?>) redis.call("XPENDING", "binomic:{" + queue + "}:stream", "binomic");
        assertEquals(JOBS, ((Number) summary.getFirst()).intValue(), "their deliveries stay pending, for reclaim: " + summary);
    }
}
