package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tasks submitted through {@link Binomic} and run by its worker, with Redis as the broker. */
class EndToEndIT {
    private final RedisServer redis = RedisServer.shared();
    private String queue;
    private Ledger ledger;

    @BeforeEach
    void freshQueue() {
        queue = "e2e-" + UUID.randomUUID().toString().substring(0, 8);
        ledger = new Ledger(redis.host(), redis.port(), queue);
    }

    private static List<Job> jobs(int count, long sleepMillis, int failures) {
        return IntStream.range(0, count).mapToObj(n -> new Job(n, sleepMillis, failures)).toList();
    }

    @Test
    void submittedJobsRunOnceEachAndLeaveNothingInRedis() {
        try (TestApp.App app = TestApp.client(redis, queue, Duration.ofSeconds(10), Duration.ofMillis(100))) {
            Binomic binomic = app.binomic();
            Task<Job, Void> job = app.job();
            binomic.startWorker();
            binomic.submitAll(job, jobs(500, 0, 0));

            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == 500, () -> ledger.done().size() + " of 500 done");

            assertEquals(500, ledger.totalRuns(), "each job ran exactly once");
            Await.until(Duration.ofSeconds(5), () -> binomic.queueStats(queue).pending() == 0, () -> "acks outstanding");
            assertEquals(new QueueStats(queue, 0, 0, 0, 0, binomic.queueStats(queue).consumers()), binomic.queueStats(queue));
            Await.until(Duration.ofSeconds(5), () -> (Long) redis.call("XLEN", "binomic:{" + queue + "}:stream") == 0L,
                    () -> "acked entries are trimmed from the stream: XLEN " + redis.call("XLEN", "binomic:{" + queue + "}:stream"));
        }
    }

    @Test
    void delayTaskWaitsDurablyInRedisThenRuns() {
        Task<Job, Void> later = Task.builder("later", Job.class).queue(queue).delay(Duration.ofMillis(800)).build();
        BinomicConfig config = TestApp.config(redis.url(), queue, Duration.ofSeconds(10));
        try (Binomic binomic = Binomic.builder().config(config).handle(later, job -> {
            ledger.started(job.n());
            ledger.finished(job.n());
            return null;
        }).build().start()) {
            binomic.startWorker();
            Instant submitted = Instant.now();
            binomic.submit(later, new Job(1, 0, 0));
            assertEquals(1, binomic.queueStats(queue).delayed(), "waits in the delayed set, not in the stream");

            Await.until(Duration.ofSeconds(10), () -> ledger.done().contains(1), () -> binomic.queueStats(queue).toString());

            Duration took = Duration.between(submitted, Instant.now());
            assertTrue(took.compareTo(Duration.ofMillis(800)) >= 0, "ran before its delay: " + took);
            assertEquals(0, binomic.queueStats(queue).delayed());
        }
    }

    @Test
    void failingJobIsRetriedAfterItsBackoffUntilItSucceeds() {
        try (TestApp.App app = TestApp.client(redis, queue, Duration.ofSeconds(10), Duration.ofMillis(200))) {
            Binomic binomic = app.binomic();
            Task<Job, Void> job = app.job();
            binomic.startWorker();
            binomic.submitAll(job, jobs(20, 0, 2));

            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == 20, () -> ledger.done().size() + " of 20 done");

            ledger.runs().forEach((n, runs) -> assertEquals(3L, runs, "job " + n + ": two failures, then success"));
            assertEquals(0, binomic.queueStats(queue).deadLetters());
        }
    }

    @Test
    void brokenEntryAndUnknownTaskEndInTheDeadLetterQueueWhileTheWorkerGoesOn() {
        String stream = "binomic:{" + queue + "}:stream";
        try (TestApp.App app = TestApp.client(redis, queue, Duration.ofSeconds(10), Duration.ofMillis(100))) {
            Binomic binomic = app.binomic();
            Task<Job, Void> job = app.job();
            binomic.startWorker();
            redis.call("XADD", stream, "*", "written", "by-hand", "attempt", "x");
            redis.call("XADD", stream, "*", "id", UUID.randomUUID().toString(), "task", "no-such-task", "queue", queue,
                    "attempt", "1", "enqueuedAt", Long.toString(System.currentTimeMillis()), "payload", "{}", "headers", "{}");
            binomic.submit(job, new Job(1, 0, 0));

            Await.until(Duration.ofSeconds(20), () -> ledger.done().contains(1)
                    && binomic.queueStats(queue).deadLetters() == 2, () -> binomic.queueStats(queue).toString());

            Map<DeadLetterReason, DeadLetter> byReason = new HashMap<>();
            binomic.deadLetters().list(queue, DeadLetterFilter.all(), 10).forEach(l -> byReason.put(l.failure().reason(), l));
            assertEquals("by-hand", byReason.get(DeadLetterReason.DECODE_ERROR).rawFields().get("written"));
            assertEquals("no-such-task", byReason.get(DeadLetterReason.TASK_NOT_FOUND).task());
            assertTrue(byReason.get(DeadLetterReason.TASK_NOT_FOUND).message().isPresent());
            // The ledger has job 1 done when its handler returns; its ack follows from the settler, a round trip later.
            Await.until(Duration.ofSeconds(10), () -> binomic.queueStats(queue).pending() == 0, () -> binomic.queueStats(queue).toString());
        }
    }

    @Test
    void strandedMessagePastItsLastAttemptIsDeadLetteredNotRun() throws Exception {
        // A consumer takes the message on its last attempt (5 of 5) and vanishes without acking.
        try (io.binomic.api.spi.Broker ghost = Brokers.redis(redis)) {
            ghost.start(List.of(queue));
            ghost.enqueue(io.binomic.api.spi.Message.fromWire(UUID.randomUUID(), TestApp.TASK, queue, 5, Instant.now(),
                    "{\"n\":7,\"sleepMillis\":0,\"failures\":0}".getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of()));
            assertEquals(1, ghost.fetch(List.of(queue), "ghost", 1, Duration.ofSeconds(1)).size());
        }
        try (TestApp.App app = TestApp.client(redis, queue, Duration.ofSeconds(1), Duration.ofMillis(100))) {
            Binomic binomic = app.binomic();
            binomic.startWorker();

            Await.until(Duration.ofSeconds(20), () -> binomic.queueStats(queue).deadLetters() == 1,
                    () -> binomic.queueStats(queue).toString());

            DeadLetter letter = binomic.deadLetters().list(queue, DeadLetterFilter.all(), 10).getFirst();
            assertEquals(DeadLetterReason.MAX_ATTEMPTS, letter.failure().reason());
            assertEquals(0, ledger.totalRuns(), "a message past its last attempt is not run again");
            assertEquals(0, binomic.queueStats(queue).pending());
        }
    }

    @Test
    void deadLettersReplayedThroughTheApiRunAgain() {
        try (TestApp.App app = TestApp.client(redis, queue, Duration.ofSeconds(10), Duration.ofMillis(50))) {
            Binomic binomic = app.binomic();
            Task<Job, Void> job = app.job();
            binomic.startWorker();
            binomic.submitAll(job, jobs(5, 0, 5)); // maxAttempts 5: every attempt fails

            Await.until(Duration.ofSeconds(30), () -> binomic.queueStats(queue).deadLetters() == 5,
                    () -> binomic.queueStats(queue).toString());
            assertEquals(5, binomic.deadLetters().count(queue, DeadLetterFilter.all().withReason(DeadLetterReason.MAX_ATTEMPTS)));

            assertEquals(5, binomic.deadLetters().replay(queue, DeadLetterFilter.all()));

            Await.until(Duration.ofSeconds(20), () -> ledger.done().size() == 5, () -> ledger.done().size() + " of 5 done");
            assertEquals(0, binomic.queueStats(queue).deadLetters());
        }
    }

    @Test
    void twoClientsWithTheSameIntervalTaskEnqueueOncePerTick() throws Exception {
        Task<Void, Void> tick = Task.builder("tick").queue(queue).interval(Duration.ofMillis(300)).build();
        assertOneEnqueuePerTick(tick, Duration.ofMillis(300));
    }

    @Test
    void twoClientsWithTheSameCronTaskEnqueueOncePerTick() throws Exception {
        Task<Void, Void> tick = Task.builder("every-second").queue(queue).cron("* * * * * *").build();
        assertOneEnqueuePerTick(tick, Duration.ofSeconds(1));
    }

    /**
     * One client's clock runs 10 minutes ahead. Ticks are judged by Redis' TIME, so it fires
     * nothing early and does not block the correct client's ticks (before, it claimed a tick 10
     * minutes ahead and every earlier tick was refused).
     */
    @Test
    void aClientWhoseClockRunsAheadNeitherFiresEarlyNorBlocksTheOthers() throws Exception {
        Task<Void, Void> tick = Task.builder("tick").queue(queue).interval(Duration.ofMillis(300)).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(true).build();
        Instant start = Instant.now();
        Binomic fast = Binomic.builder().config(config).task(tick)
                .clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofMinutes(10))).build().start();
        Binomic correct = Binomic.builder().config(config).task(tick).build().start();
        Thread.sleep(2100);
        // A loaded machine fires fewer ticks in 2.1 s: wait for enough of them, however long that takes.
        Await.until(Duration.ofSeconds(30), () -> (Long) redis.call("XLEN", "binomic:{" + queue + "}:stream") >= 5,
                () -> redis.call("XLEN", "binomic:{" + queue + "}:stream") + " ticks");
        Instant end = Instant.now();
        correct.close();
        fast.close();

        List<Instant> ticks = new ArrayList<>();
        for (Object entry : (List<?>) redis.call("XRANGE", "binomic:{" + queue + "}:stream", "-", "+")) {
            List<?> fields = (List<?>) ((List<?>) entry).get(1);
            String headers = (String) fields.get(fields.indexOf("headers") + 1);
            ticks.add(Instant.parse(headers.replaceAll(".*\"tick\":\"([^\"]+)\".*", "$1")));
        }
        assertTrue(ticks.stream().noneMatch(t -> t.isAfter(end)), "ticks fired before their time: " + ticks);
        assertTrue(ticks.stream().allMatch(t -> t.isAfter(start)), ticks.toString());
        assertEquals(ticks.size(), ticks.stream().distinct().count(), "a tick was enqueued twice: " + ticks);
        assertTrue(ticks.size() >= 5, "expected at least 5 ticks (none blocked), got " + ticks);
    }

    /** Runs two clients with the same periodic task for a while, then checks the stream: one message per tick. */
    private void assertOneEnqueuePerTick(Task<Void, Void> task, Duration period) throws Exception {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(true).build();
        Instant start = Instant.now();
        List<Binomic> clients = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            clients.add(Binomic.builder().config(config).task(task).build().start());
        }
        Thread.sleep(period.multipliedBy(7).toMillis());
        clients.forEach(Binomic::close);
        Instant end = Instant.now();

        List<String> ticks = new ArrayList<>();
        for (Object entry : (List<?>) redis.call("XRANGE", "binomic:{" + queue + "}:stream", "-", "+")) {
            List<?> fields = (List<?>) ((List<?>) entry).get(1);
            ticks.add((String) fields.get(fields.indexOf("headers") + 1));
        }
        long expected = Duration.between(start, end).toMillis() / period.toMillis();
        assertEquals(ticks.size(), ticks.stream().distinct().count(), "a tick was enqueued twice: " + ticks);
        assertTrue(ticks.size() <= expected + 1, ticks.size() + " enqueued for about " + expected + " ticks: " + ticks);
        // Fewer is timing, not duplication: a scheduler held up past a period by a loaded machine fires
        // only the latest of the ticks it missed (coalesced by design).
        assertTrue(ticks.size() >= expected / 2, ticks.size() + " enqueued for about " + expected + " ticks: " + ticks);
    }
}
