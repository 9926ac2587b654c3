package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Faults of workers and Redis, each ending with a count of every message: none may be lost, and
 * duplicates (the price of at-least-once when a worker dies holding work) are counted and bounded.
 * Workers that get killed run in their own JVMs; {@code System.out} gets one summary line per test.
 */
class FaultIT {
    private static final Duration LEASE = Duration.ofSeconds(3);
    private final RedisServer redis = RedisServer.shared();
    private String queue;
    private Ledger ledger;

    @BeforeEach
    void freshQueue() {
        queue = "fault-" + UUID.randomUUID().toString().substring(0, 8);
        ledger = new Ledger(redis.host(), redis.port(), queue);
    }

    private static List<Job> jobs(int count, long sleepMillis, int failures) {
        return IntStream.range(0, count).mapToObj(n -> new Job(n, sleepMillis, failures)).toList();
    }

    private static Set<Integer> all(int count) {
        return IntStream.range(0, count).boxed().collect(Collectors.toSet());
    }

    private void submit(RedisServer server, List<Job> jobs) {
        try (TestApp.App producer = TestApp.client(server, queue, LEASE, Duration.ofMillis(100))) {
            producer.binomic().submitAll(producer.job(), jobs);
        }
    }

    /** One machine-readable line per fault test; duplicates = executions beyond the planned ones. */
    private void report(String test, int messages, int plannedExecutions) {
        Map<Integer, Long> runs = ledger.runs();
        long executions = runs.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf("FAULT %s: messages=%d done=%d lost=%d executions=%d planned=%d duplicates=%d%n", test, messages,
                ledger.done().size(), messages - ledger.done().size(), executions, plannedExecutions, executions - plannedExecutions);
    }

    @Test
    void killedWorkersMessagesRunAgainOnAnotherWorkerWithTheNextAttempt() {
        int count = 12;
        try (ChildWorker first = ChildWorker.start(redis, queue, LEASE, Duration.ofMillis(100))) {
            submit(redis, jobs(count, 2500, 0));
            // The first worker holds 8 (its concurrency) mid-task; 4 wait in the stream.
            Await.until(Duration.ofSeconds(20), () -> ledger.attempts().size() >= 8, () -> ledger.runs().toString());
            first.kill9();
        }
        long killedAt = System.nanoTime();
        Set<Integer> inFlightAtKill = Set.copyOf(ledger.runs().keySet());
        assertTrue(ledger.done().isEmpty(), "nothing finished before the kill");

        try (ChildWorker second = ChildWorker.start(redis, queue, LEASE, Duration.ofMillis(100))) {
            // Measured from the second worker's readiness: how long its JVM takes to start depends on the
            // machine's load, not on the reclaim being measured.
            long readyAt = System.nanoTime();
            Await.until(Duration.ofSeconds(30), () -> inFlightAtKill.stream().allMatch(n -> ledger.runs().get(n) >= 2),
                    () -> ledger.runs().toString());
            Duration rerunAfter = Duration.ofNanos(System.nanoTime() - readyAt);
            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == count, () -> ledger.done().toString());

            assertTrue(rerunAfter.compareTo(LEASE.plusSeconds(6)) < 0, "stranded messages must be rerun within about one lease"
                    + " timeout of the new worker's start, took " + rerunAfter + " (" + Duration.ofNanos(readyAt - killedAt)
                    + " from the kill to its start)");
            assertTrue(second.log().contains("as attempt 2"), "the reclaimed messages run as attempt 2:\n" + second.log());
        }
        report("sigkill-mid-task", count, count);
        List<String> attempts = ledger.attempts();
        for (int n : inFlightAtKill) {
            assertEquals(List.of(n + ":1", n + ":2"), attempts.stream().filter(a -> a.startsWith(n + ":")).toList(),
                    "job " + n + " ran as attempt 1 on the killed worker, then as attempt 2");
        }
        assertEquals(all(count), ledger.done(), "no message lost");
        assertEquals(count + inFlightAtKill.size(), ledger.totalRuns(),
                "exactly the messages in flight at the kill ran twice; no other duplicate");
    }

    @Test
    void frozenWorkersMessagesAreTakenOverAndNothingIsLostWhenItThaws() {
        int count = 8;
        try (ChildWorker frozen = ChildWorker.start(redis, queue, LEASE, Duration.ofMillis(100))) {
            submit(redis, jobs(count, 2500, 0));
            Await.until(Duration.ofSeconds(20), () -> ledger.attempts().size() >= count, () -> ledger.runs().toString());
            frozen.signal("STOP"); // alive but silent: no renewals, no acks (a GC pause, a stuck VM)
            try (ChildWorker second = ChildWorker.start(redis, queue, LEASE, Duration.ofMillis(100))) {
                Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == count,
                        () -> ledger.done() + "; taking-over worker's output:\n" + second.log());
                frozen.signal("CONT"); // wakes up, finishes its copies, acks entries the other worker already acked
                Await.until(Duration.ofSeconds(20), () -> ledger.totalRuns() == 2L * count
                        && (Long) ((List<?>) redis.call("XPENDING", "binomic:{" + queue + "}:stream", "binomic")).getFirst() == 0,
                        () -> ledger.runs().toString());
                RedisServer.sleep(1000); // room for a wrongful third execution to show up
            }
        }
        report("sigstop-then-sigcont", count, count);
        assertEquals(all(count), ledger.done(), "no message lost");
        assertEquals(2L * count, ledger.totalRuns(), "each message ran on the frozen worker and once more on the other; no third run");
    }

    /**
     * A worker frozen past its lease, alone: on waking, its own reclaim races with the acks of the
     * tasks it had finished. Before, an ack at the old delivery count was refused as stale, the entry
     * lapsed again, and the same worker ran the task a second time.
     */
    @Test
    void aLoneWorkerFrozenPastItsLeaseRunsNothingTwiceWhenItThaws() {
        int count = 12;
        try (ChildWorker alone = ChildWorker.start(redis, queue, LEASE, Duration.ofMillis(100))) {
            submit(redis, jobs(count, 2000, 0));
            Await.until(Duration.ofSeconds(20), () -> ledger.attempts().size() >= 8, () -> ledger.runs().toString());
            alone.signal("STOP");
            RedisServer.sleep(3 * LEASE.toMillis());
            alone.signal("CONT");
            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == count,
                    () -> ledger.done() + "; worker output:\n" + alone.log());
            Await.until(Duration.ofSeconds(10), () -> (Long) ((List<?>) redis.call("XPENDING", "binomic:{" + queue + "}:stream", "binomic")).getFirst() == 0,
                    () -> "entries still pending");
            RedisServer.sleep(2 * LEASE.toMillis()); // room for a wrongful second run
            report("sigstop-alone", count, count);
            assertEquals(count, ledger.totalRuns(), "runs per job: " + ledger.runs() + "; worker output:\n" + alone.log());
        }
    }

    @Test
    void retryIsNotLostWhenWorkerDiesDuringBackoff() {
        int count = 6;
        String delayed = "binomic:{" + queue + "}:delayed";
        try (ChildWorker first = ChildWorker.start(redis, queue, LEASE, Duration.ofSeconds(4))) {
            submit(redis, jobs(count, 50, 1));
            Await.until(Duration.ofSeconds(20), () -> (Long) redis.call("ZCARD", delayed) == count,
                    () -> "delayed: " + redis.call("ZCARD", delayed));
            first.kill9(); // inside the 4 s backoff of every retry
        }
        assertEquals(0L, ((List<?>) redis.call("XPENDING", "binomic:{" + queue + "}:stream", "binomic")).getFirst(),
                "the failed deliveries were acked in the same step that scheduled their retry");

        try (ChildWorker second = ChildWorker.start(redis, queue, LEASE, Duration.ofSeconds(4))) {
            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == count,
                    () -> ledger.done() + "; second worker's output:\n" + second.log());
        }
        report("sigkill-in-backoff", count, 2 * count);
        assertEquals(all(count), ledger.done(), "no retry lost");
        ledger.runs().forEach((n, runs) -> assertEquals(2L, runs, "job " + n + ": one failure, one retry, no duplicate"));
    }

    @Test
    void taskLongerThanTheLeaseOnALiveWorkerIsNotReclaimed() {
        Duration lease = Duration.ofSeconds(1);
        try (TestApp.App a = TestApp.client(redis, queue, lease, Duration.ofMillis(100));
             TestApp.App b = TestApp.client(redis, queue, lease, Duration.ofMillis(100))) {
            a.binomic().startWorker();
            b.binomic().startWorker();
            a.binomic().submitAll(a.job(), jobs(4, 4000, 0)); // four lease timeouts long

            Await.until(Duration.ofSeconds(20), () -> ledger.done().size() == 4, () -> ledger.done().toString());
        }
        report("long-task-live-worker", 4, 4);
        ledger.runs().forEach((n, runs) -> assertEquals(1L, runs, "job " + n + " was stolen from its live worker"));
    }

    @Test
    void workersReconnectAndFinishAfterRedisRestarts() {
        int count = 300;
        try (RedisServer own = RedisServer.startNew()) {
            ledger = new Ledger(own.host(), own.port(), queue);
            submit(own, jobs(count, 20, 0));
            try (TestApp.App worker = TestApp.client(own, queue, LEASE, Duration.ofMillis(200))) {
                worker.binomic().startWorker();
                Await.until(Duration.ofSeconds(20), () -> ledger.done().size() >= 60, () -> ledger.done().size() + " done");
                own.stop();
                RedisServer.sleep(1500);
                own.start();

                Await.until(Duration.ofSeconds(60), () -> ledger.done().size() == count,
                        () -> ledger.done().size() + " of " + count + " done; " + worker.binomic().queueStats(queue));
                assertEquals(0, worker.binomic().queueStats(queue).deadLetters());
            }
            report("redis-restart", count, count);
            assertEquals(all(count), ledger.done(), "no message lost");
        }
    }

    @Test
    void workersReconnectAndFinishAfterTheirConnectionsAreKilled() {
        int count = 300;
        submit(redis, jobs(count, 20, 0));
        try (TestApp.App worker = TestApp.client(redis, queue, LEASE, Duration.ofMillis(200))) {
            worker.binomic().startWorker();
            for (int round = 1; round <= 3; round++) {
                int target = round * 60;
                long t0 = System.nanoTime();
                Await.until(Duration.ofSeconds(20), () -> ledger.done().size() >= target, () -> ledger.done().size() + " done");
                System.out.println("ROUND " + round + " reached " + target + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
                redis.killClients();
            }
            Await.until(Duration.ofSeconds(60), () -> ledger.done().size() == count,
                    () -> ledger.done().size() + " of " + count + " done; " + worker.binomic().queueStats(queue));
        }
        report("client-kill", count, count);
        assertEquals(all(count), ledger.done(), "no message lost");
    }
}
