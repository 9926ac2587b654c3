package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Outcomes a worker holds because Redis is frozen (SIGSTOP: connections stay open, nothing is
 * answered) are written as soon as Redis answers again, while the worker runs and while it stops:
 * not when the client's command timeout ends the attempt under way at the thaw. A freeze of several
 * seconds outlasts the client's connection checks, which close connections with attempts on them;
 * where in the worker's traffic the freeze falls decides which attempt that is, so each test freezes
 * at a few offsets. Prints {@code HELD-THAW ...} lines.
 */
class HeldOutcomesAfterFreezeIT {
    private static final int CONCURRENCY = 4;
    /** Jobs of 2 s keep a worker of 4 busy for the whole test. */
    private static final int JOBS = 60;
    private static final Duration JOB = Duration.ofSeconds(2);
    private static final Duration GRACE = Duration.ofSeconds(5);
    /** What must never happen: outcomes still unwritten this long after Redis answers again (loaded machine included). */
    private static final Duration WRITTEN_WITHIN = Duration.ofSeconds(2);

    record Job(int n) { }

    private final CapturedCoreLog log = new CapturedCoreLog();

    private Binomic binomic(RedisServer redis, String queue, Task<Job, Void> task) {
        return Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                        .worker(WorkerConfig.builder().queues(queue).concurrency(CONCURRENCY).leaseTimeout(Duration.ofSeconds(10))
                                .pollTimeout(Duration.ofSeconds(1)).reclaimInterval(Duration.ofSeconds(5)).shutdownGrace(GRACE).build())
                        .build())
                .handle(task, job -> {
                    Thread.sleep(JOB.toMillis());
                    return null;
                }).build().start();
    }

    /** A worker running 2 s jobs, {@code offsetMillis} past the first round of them. */
    private static Worker busyWorker(Binomic binomic, Task<Job, Void> task, int offsetMillis) throws InterruptedException {
        binomic.submitAll(task, IntStream.range(0, JOBS).mapToObj(Job::new).toList());
        Worker worker = binomic.startWorker();
        Await.until(Duration.ofSeconds(20), () -> worker.counters().inFlight() == CONCURRENCY, () -> worker.counters().toString());
        Thread.sleep(JOB.toMillis() + offsetMillis);
        return worker;
    }

    /** How long after {@code thawedAt} (System.nanoTime) the worker held no outcome any more, waiting at most 30 s. */
    private static long writtenAfterMillis(Worker worker, long thawedAt) {
        Await.until(Duration.ofSeconds(30), () -> worker.counters().held() == 0, () -> worker.counters().toString());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - thawedAt);
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1250, 1500})
    void outcomesHeldThroughAFreezeAreWrittenAsSoonAsRedisAnswers(int offsetMillis) throws Exception {
        String queue = "held-thaw-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Job, Void> task = Task.builder("hold", Job.class).queue(queue).build();
        try (RedisServer redis = RedisServer.startNew(); Binomic binomic = binomic(redis, queue, task)) {
            Worker worker = busyWorker(binomic, task, offsetMillis);
            redis.freeze();
            Thread.sleep(7000);
            long held = worker.counters().held();
            redis.thaw();
            long took = writtenAfterMillis(worker, System.nanoTime());
            System.out.println("HELD-THAW running, offset " + offsetMillis + " ms: " + held + " held at the thaw, written " + took
                    + " ms after it");
            assertTrue(held > 0, "the freeze caught outcomes: " + worker.counters());
            assertTrue(took < WRITTEN_WITHIN.toMillis(), held + " outcome(s) held through the freeze were written " + took
                    + " ms after Redis answered again, not at once");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1250, 1500})
    void outcomesHeldAtAStopAreWrittenAsSoonAsRedisAnswersWithinTheGrace(int offsetMillis) throws Exception {
        String queue = "held-stop-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Job, Void> task = Task.builder("hold", Job.class).queue(queue).build();
        log.attach();
        try (RedisServer redis = RedisServer.startNew(); Binomic binomic = binomic(redis, queue, task)) {
            Worker worker = busyWorker(binomic, task, offsetMillis);
            // as the outside-in run: Redis frozen, the stop 3.5 s later, Redis back 3 s into the 5 s grace
            redis.freeze();
            Thread.sleep(3500);
            Thread stop = Thread.ofPlatform().name("stopping").start(() -> worker.stop(GRACE));
            Thread.sleep(3000);
            long held = worker.counters().held();
            redis.thaw();
            long took = writtenAfterMillis(worker, System.nanoTime());
            stop.join(TimeUnit.SECONDS.toMillis(20));
            String stopped = log.lines().stream().filter(l -> l.contains(" stopped in ")).reduce((a, b) -> b).orElse("(no stopped line)");
            System.out.println("HELD-THAW stopping, offset " + offsetMillis + " ms: " + held + " held at the thaw, written " + took
                    + " ms after it; " + stopped);
            assertTrue(held > 0, "the freeze caught outcomes: " + worker.counters());
            assertTrue(stopped.contains(" 0 outcome(s) not written"), "a Redis back within the grace gets them all: " + stopped
                    + "\nlog:\n" + log.toString());
            assertTrue(took < WRITTEN_WITHIN.toMillis(), held + " outcome(s) held through the freeze were written " + took
                    + " ms after Redis answered again, not at once; log:\n" + log.toString());
        } finally {
            log.detach();
        }
    }
}
