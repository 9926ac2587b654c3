package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker in its own JVM ({@link ProxiedWorkerProcess}) reaches Redis only through a
 * {@link FaultProxy}; the producer and the ledger (every run and its attempt, in Redis) reach it
 * directly. For each fault in turn a batch is submitted, the fault applied once a few of its jobs
 * are done, then lifted; the worker JVM is never restarted. Asserted for each fault: nothing lost;
 * the same JVM completes work again after it; no duplicate where the fault is shorter than the
 * lease minus one renewal period (under which reliability.md promises none, and a lone worker never
 * runs again what it holds); a stall shows in the worker's health within 5 s + the poll timeout +
 * 1 s, and Redisson gives up a stalled connection within 2 x the command timeout + 2 s (its PING
 * check, see reliability.md).
 *
 * <p>The default build runs the stall alone (NetworkFaultIT runs the other faults in-process). With
 * {@code -Pchaos} ({@code chaos.size=long}) every fault runs, on more jobs and for longer, and a
 * stall past the lease with a second worker JVM reaching Redis directly: that worker takes over
 * what the stalled one held, so the bound on duplicates is what the stalled worker held (its slots,
 * and what returned just before the stall with its outcome not yet written). One
 * {@code NETFAULT-JVM} line per fault goes to {@code System.out}: the figures of reliability.md's
 * table.
 */
class NetworkFaultWorkerJvmIT {
    private static final boolean LONG = "long".equals(System.getProperty("chaos.size"));
    private static final Duration LEASE = Duration.ofSeconds(20);
    /** TestApp's worker: 8 slots, poll timeout 200 ms. */
    private static final int CONCURRENCY = 8;
    private static final Duration POLL = Duration.ofMillis(200);
    /** What the worker allows a call past the poll timeout before it says BROKER_UNREACHABLE. */
    private static final Duration UNREACHABLE_AFTER = Duration.ofSeconds(1);
    /** BrokerConfig.commandTimeout's default, which is also Redisson's ping interval (RedissonSetup). */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);
    private static final int JOBS = LONG ? 1000 : 120;
    private static final long JOB_MILLIS = 100;
    private static final Duration RESUME_WITHIN = Duration.ofSeconds(30);
    /**
     * Under {@code LEASE - LEASE / 4}, so that it runs no task twice, and over 2 x the command
     * timeout, so that Redisson gives up a stalled connection while it lasts.
     */
    private static final Duration STALL = Duration.ofSeconds(LONG ? 14 : 13);
    private static final Duration FAULT = Duration.ofSeconds(10);

    private final RedisServer redis = RedisServer.shared();
    private final String queue = "netfault-jvm-" + UUID.randomUUID().toString().substring(0, 8);
    private final Ledger ledger = new Ledger(redis.host(), redis.port(), queue);
    private final List<String> report = new ArrayList<>();
    private FaultProxy proxy;
    private Binomic producer;
    private Task<Job, Void> job;
    private ChildWorker worker;
    private int nextJob;

    @BeforeEach
    void start() {
        proxy = FaultProxy.to(redis.host(), redis.port(), Duration.ofMinutes(LONG ? 30 : 5));
        job = TestApp.job(queue, Duration.ofMillis(100));
        producer = Binomic.builder().config(TestApp.config(redis.url(), queue, LEASE)).build().start();
        worker = ChildWorker.start(ProxiedWorkerProcess.class, List.of(redis.host(), Integer.toString(redis.port()),
                Integer.toString(proxy.port()), queue, Long.toString(LEASE.toMillis())));
    }

    @AfterEach
    void stop() {
        report.forEach(System.out::println);
        if (worker != null) {
            worker.close();
        }
        if (producer != null) {
            producer.close();
        }
        proxy.close();
    }

    /**
     * What one fault did.
     *
     * @param returnedInSecondBefore executions that returned in the second before the fault, in any worker; -1 if not counted
     * @param detected from the fault's start to the first health other than CONSUMING, null if none
     * @param givenUp from the fault's start to the first connection the worker closed, null if none
     * @param allGivenUp from the fault's start until the worker had closed every connection open at
     *        the start, null if it had not by the time work resumed (for a fault for good: by the batch's end)
     * @param resumed from the fault's end until a job of the batch completed again
     */
    private record Outcome(String fault, int jobs, long runs, long duplicates, long lost, long laterAttempts,
                           int returnedInSecondBefore, Duration detected,
                           Duration givenUp, Duration allGivenUp, Duration resumed) { }

    @Test
    void aWorkerJvmRidesOutNetworkFaultsWithoutARestartLossOrDuplicate() {
        List<Outcome> outcomes = new ArrayList<>();
        Outcome stall = fault("stall " + STALL.toSeconds() + " s, sockets open", STALL, () -> proxy.stall(true), () -> { });
        outcomes.add(stall);
        Outcome blackHole = null;
        if (LONG) {
            // NetworkFaultIT runs these on an in-process worker in every build.
            outcomes.add(fault("reset mid-reply every 300 ms", FAULT, proxy::resetMidReply, proxy::resetMidReply));
            outcomes.add(fault("latency 500 ms each way", FAULT, () -> proxy.latency(Duration.ofMillis(500)), () -> { }));
            outcomes.add(fault("latency 50 ms each way", FAULT, () -> proxy.latency(Duration.ofMillis(50)), () -> { }));
            outcomes.add(fault("bandwidth 4 KiB/s each way", FAULT, () -> proxy.bandwidth(4 * 1024), () -> { }));
            blackHole = fault("open connections stall for good", Duration.ofSeconds(1), proxy::blackHoleOpenConnections, () -> { },
                    false, true);
            outcomes.add(blackHole);
        }
        for (Outcome o : outcomes) {
            assertEquals(0, o.lost(), o.toString());
            assertEquals(0, o.duplicates(), "no fault outlasts the lease minus a renewal period: " + o);
            assertEquals(0, o.laterAttempts(), "every job ran as attempt 1: " + o);
        }
        // 1.5 s of slack for a loaded machine.
        assertTrue(stall.detected() != null && stall.detected().compareTo(UNREACHABLE_AFTER.plus(POLL).plusMillis(1500)) <= 0,
                "a stall shows as BROKER_UNREACHABLE within 1 s + the poll timeout of its first call that does not return: " + stall);
        // 2 s of slack: Redisson's timer runs late on a loaded machine.
        assertTrue(stall.givenUp() != null && stall.givenUp().compareTo(COMMAND_TIMEOUT.multipliedBy(2).plusSeconds(2)) <= 0,
                "Redisson closes a stalled connection within 2 x the command timeout (its ping interval): " + stall);
        if (blackHole != null) {
            // A connection in a blocking read is pinged only from the first ping time after the read
            // timed out (poll + command timeout), and closed one ping interval after that.
            assertTrue(blackHole.allGivenUp() != null
                            && blackHole.allGivenUp().compareTo(COMMAND_TIMEOUT.multipliedBy(3).plus(POLL).plusSeconds(1)) <= 0,
                    "connections that stall for good are closed within 3 x the command timeout + the poll timeout: " + blackHole);
        }
        if (LONG) {
            assertTrue(proxy.resets() > 0, "the resets hit connections: " + proxy.resets());
            stallPastTheLease();
        }
    }

    /**
     * A stall longer than the lease while a second worker JVM reaches Redis directly: it reclaims
     * what the stalled worker held, so those jobs may run twice (the stalled worker's late outcomes
     * are fenced no-ops); nothing else may. Then the second worker is killed, idle, and a last
     * batch must be run by the stalled worker alone.
     */
    private void stallPastTheLease() {
        Duration pastLease = LEASE.plusSeconds(10);
        ChildWorker direct = ChildWorker.start(ProxiedWorkerProcess.class, List.of(redis.host(),
                Integer.toString(redis.port()), Integer.toString(redis.port()), queue, Long.toString(LEASE.toMillis())));
        Outcome outcome;
        try {
            outcome = fault("stall " + pastLease.toSeconds() + " s (past the lease), a second worker direct", pastLease,
                    () -> proxy.stall(true), () -> { }, true, false);
        } finally {
            direct.kill9();
        }
        assertEquals(0, outcome.lost(), outcome.toString());
        // It held at most its slots' executions plus those that returned before the stall with the
        // outcome not yet written; a healthy worker writes an outcome within a settle round, so
        // those returned in the second before (in either worker) over-count them.
        assertTrue(outcome.duplicates() <= CONCURRENCY + outcome.returnedInSecondBefore(),
                "only what the stalled worker held (its " + CONCURRENCY + " slots, and what returned just before the stall) runs twice: "
                        + outcome);
        Outcome after = fault("after the second worker was killed: no fault", Duration.ZERO, () -> { }, () -> { });
        assertEquals(0, after.lost(), "the worker stalled past its lease works again, alone: " + after);
        assertEquals(0, after.duplicates(), after.toString());
    }

    /**
     * Submits a batch, applies {@code on} once a few of it ran (and {@code during} every 300 ms),
     * lifts it after {@code length}, and waits for the whole batch.
     */
    private Outcome fault(String name, Duration length, Runnable on, Runnable during) {
        return fault(name, length, on, during, false, false);
    }

    /**
     * The same, counting what returned in the second before the fault when {@code countTheSecondBefore};
     * {@code forGood}: the connections open at the start stay stalled after the fault is lifted, so
     * that the client closing them is watched until the batch is done, not only until work resumed.
     */
    private Outcome fault(String name, Duration length, Runnable on, Runnable during, boolean countTheSecondBefore,
                          boolean forGood) {
        int first = nextJob;
        nextJob += JOBS;
        Set<Integer> batch = IntStream.range(first, first + JOBS).boxed().collect(Collectors.toSet());
        producer.submitAll(job, batch.stream().sorted().map(n -> new Job(n, JOB_MILLIS, 0)).toList());
        Await.until(Duration.ofSeconds(30), () -> doneOf(batch) >= CONCURRENCY,
                () -> "batch of " + name + ": " + doneOf(batch) + " done; worker output:\n" + worker.log());

        int returnedInSecondBefore = -1;
        if (countTheSecondBefore) {
            // A healthy worker writes an outcome within a settle round: what returned in the second
            // before the fault bounds the outcomes it may not have written when the fault began.
            int doneSecondBefore = ledger.done().size();
            RedisServer.sleep(1000);
            returnedInSecondBefore = ledger.done().size() - doneSecondBefore;
        }
        int doneAtStart = doneOf(batch);
        long startMillis = System.currentTimeMillis();
        long start = System.nanoTime();
        on.run();
        long lastDuring = start;
        while (System.nanoTime() - start < length.toNanos()) {
            if (System.nanoTime() - lastDuring > 300_000_000L) {
                during.run();
                lastDuring = System.nanoTime();
            }
            RedisServer.sleep(20);
        }
        int doneAtHeal = doneOf(batch);
        proxy.heal();
        long healed = System.nanoTime();
        while (doneOf(batch) == doneAtHeal && doneAtHeal < JOBS) {
            if (System.nanoTime() - healed > RESUME_WITHIN.toNanos()) {
                throw new AssertionError(name + ": nothing completes within " + RESUME_WITHIN + " after the fault ends; proxy accepted "
                        + proxy.accepted() + " connections; worker output:\n" + worker.log());
            }
            RedisServer.sleep(20);
        }
        long resumedAt = System.nanoTime();
        Duration resumed = Duration.ofNanos(resumedAt - healed);
        Await.until(Duration.ofSeconds(LONG ? 120 : 40), () -> doneOf(batch) == JOBS,
                () -> name + ": " + doneOf(batch) + " of " + JOBS + " done; queue " + producer.queueStats(queue)
                        + "; worker output:\n" + worker.log());
        Await.until(Duration.ofSeconds(10), () -> lastHealth().startsWith("CONSUMING"),
                () -> name + ": health " + lastHealth());

        Map<Integer, Long> runs = ledger.runs();
        long executions = batch.stream().mapToLong(n -> runs.getOrDefault(n, 0L)).sum();
        long laterAttempts = ledger.attempts().stream().map(a -> a.split(":"))
                .filter(a -> batch.contains(Integer.parseInt(a[0])) && !a[1].equals("1")).count();
        Duration detected = firstUnhealthySince(startMillis);
        long watchedUntil = forGood ? System.nanoTime() : resumedAt;
        OptionalLong close = proxy.firstClientCloseSince(start);
        Duration givenUp = close.isPresent() && close.getAsLong() < watchedUntil ? Duration.ofNanos(close.getAsLong() - start) : null;
        OptionalLong allClosed = proxy.allClientClosesOfOpenAt(start);
        Duration allGivenUp = allClosed.isPresent() && allClosed.getAsLong() < watchedUntil
                ? Duration.ofNanos(allClosed.getAsLong() - start) : null;
        Outcome outcome = new Outcome(name, JOBS, executions, executions - JOBS, JOBS - doneOf(batch), laterAttempts,
                returnedInSecondBefore, detected, givenUp, allGivenUp, resumed);
        report.add(String.format("NETFAULT-JVM %s: jobs=%d doneDuringFault=%d runs=%d duplicates=%d lost=%d laterAttempts=%d"
                        + " returnedInSecondBefore=%d unhealthyAfter=%s firstConnectionClosedAfter=%s allConnectionsClosedAfter=%s"
                        + " resumedAfter=%d ms connections=%d resets=%d", name, JOBS, doneAtHeal - doneAtStart, executions,
                outcome.duplicates(), outcome.lost(), laterAttempts, returnedInSecondBefore, millis(detected), millis(givenUp),
                millis(allGivenUp), resumed.toMillis(), proxy.accepted(), proxy.resets()));
        return outcome;
    }

    private static String millis(Duration d) {
        return d == null ? "no" : d.toMillis() + " ms";
    }

    /** The worker JVM's last {@code HEALTH} line, without the word. */
    private String lastHealth() {
        List<String> lines = healthLines();
        return lines.isEmpty() ? "none yet" : lines.getLast();
    }

    /** From {@code sinceMillis} to the first health other than CONSUMING the worker JVM printed after it. */
    private Duration firstUnhealthySince(long sinceMillis) {
        for (String line : healthLines()) {
            String[] parts = line.split(" ", 3);
            long at = Long.parseLong(parts[1]);
            if (at >= sinceMillis && !parts[0].equals("CONSUMING")) {
                return Duration.ofMillis(at - sinceMillis);
            }
        }
        return null;
    }

    private List<String> healthLines() {
        return worker.log().lines().filter(l -> l.startsWith("HEALTH ")).map(l -> l.substring("HEALTH ".length())).toList();
    }

    private int doneOf(Set<Integer> batch) {
        Set<Integer> done = ledger.done();
        done.retainAll(batch);
        return done.size();
    }
}
