package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One in-process worker reaches Redis through a {@link FaultProxy}; the producer and the ledger
 * reach it directly. For each network fault in turn, a batch of jobs is submitted, the fault is
 * applied while the worker runs them, then lifted: every job must complete, without a restart of
 * the worker (the same {@link Worker} consumes again), with no job run twice (every fault is
 * shorter than the lease minus one renewal period, under which reliability.md promises no
 * duplicate, and a lone worker never runs again what it holds), every job must run as attempt 1
 * (a read whose reply a reset cut off is found, not left to reclaim), and a stall must show in
 * {@link Worker#health()} within the documented time. The last fault stalls the open connections
 * for good while new ones work, as a firewall that dropped the flows would: the worker must get
 * new connections (the PING of each connection, every command timeout, finds the dead ones). One
 * {@code NETFAULT} line per fault goes to {@code System.out}: the figures of reliability.md's table.
 */
class NetworkFaultIT {
    /** Longer than every fault below by more than one renewal period (a quarter of it). */
    private static final Duration LEASE = Duration.ofSeconds(12);
    private static final Duration POLL = Duration.ofMillis(200);
    /** What {@code HealthCheck} allows a call past the poll timeout before the broker counts as unreachable. */
    private static final Duration UNREACHABLE_AFTER = Duration.ofSeconds(1);
    private static final int JOBS = 120;
    /** Far more than any fault here needs (the slowest, connections that stall for good, about 2 x the 5 s command timeout). */
    private static final Duration RESUME_WITHIN = Duration.ofSeconds(30);
    private static final long JOB_MILLIS = 100;

    private final RedisServer redis = RedisServer.shared();
    private final String queue = "netfault-" + UUID.randomUUID().toString().substring(0, 8);
    private final Ledger ledger = new Ledger(redis.host(), redis.port(), queue);
    private final List<String> report = new ArrayList<>();
    private FaultProxy proxy;
    private Binomic producer;
    private Binomic workerSide;
    private Task<Job, Void> job;
    private int nextJob;

    @BeforeEach
    void start() {
        proxy = FaultProxy.to(redis.host(), redis.port(), Duration.ofMinutes(5));
        job = TestApp.job(queue, Duration.ofMillis(100));
        producer = Binomic.builder().config(TestApp.config(redis.url(), queue, LEASE)).handle(job, TestApp.handler(ledger))
                .build().start();
        workerSide = Binomic.builder().config(TestApp.config("redis://127.0.0.1:" + proxy.port(), queue, LEASE))
                .handle(job, TestApp.handler(ledger)).build().start();
    }

    @AfterEach
    void stop() {
        report.forEach(System.out::println);
        if (workerSide != null) {
            workerSide.close();
        }
        if (producer != null) {
            producer.close();
        }
        proxy.close();
    }

    /** What one fault did. */
    private record Outcome(String fault, int jobs, long runs, long duplicates, long lost, long laterAttempts, Duration detected,
                           Duration resumed) { }

    @Test
    void aWorkerRidesOutEachNetworkFaultWithoutARestartLossOrDuplicate() {
        Worker worker = workerSide.startWorker();
        List<Outcome> outcomes = new ArrayList<>();
        outcomes.add(fault(worker, "latency 50 ms each way", Duration.ofSeconds(3),
                () -> proxy.latency(Duration.ofMillis(50)), () -> { }));
        outcomes.add(fault(worker, "latency 500 ms each way", Duration.ofSeconds(3),
                () -> proxy.latency(Duration.ofMillis(500)), () -> { }));
        outcomes.add(fault(worker, "bandwidth 4 KiB/s each way", Duration.ofSeconds(3),
                () -> proxy.bandwidth(4 * 1024), () -> { }));
        outcomes.add(fault(worker, "stall 8 s, sockets open", Duration.ofSeconds(8),
                () -> proxy.stall(true), () -> { }));
        outcomes.add(fault(worker, "reset mid-reply every 300 ms", Duration.ofSeconds(3),
                proxy::resetMidReply, proxy::resetMidReply));
        outcomes.add(fault(worker, "open connections stall for good", Duration.ofSeconds(1),
                proxy::blackHoleOpenConnections, () -> { }));

        for (Outcome o : outcomes) {
            assertEquals(0, o.lost(), o.toString());
            assertEquals(0, o.duplicates(), "no fault outlasts the lease minus a renewal period: " + o);
            // A read whose reply a reset cut off is found under the worker's name and run as the
            // attempt it was handed out as, not left to reclaim a lease later as the next one.
            assertEquals(0, o.laterAttempts(), "every job ran as attempt 1: " + o);
        }
        Outcome stall = outcomes.get(3);
        // 1.5 s of slack for a loaded machine.
        Duration detectBound = UNREACHABLE_AFTER.plus(POLL).plusMillis(1500);
        assertTrue(stall.detected() != null && stall.detected().compareTo(detectBound) <= 0,
                "a stall shows as BROKER_UNREACHABLE within 1 s + the poll timeout of its first call that does not return: " + stall);
        assertTrue(proxy.resets() > 0, "the resets hit connections: " + proxy.resets());
    }

    /**
     * Submits a batch, applies {@code on} once a few of it ran (and {@code during} every 300 ms),
     * lifts it after {@code length}, and waits for the whole batch; watches the worker's health
     * all along.
     */
    private Outcome fault(Worker worker, String name, Duration length, Runnable on, Runnable during) {
        int first = nextJob;
        nextJob += JOBS;
        Set<Integer> batch = IntStream.range(first, first + JOBS).boxed().collect(Collectors.toSet());
        producer.submitAll(job, batch.stream().sorted().map(n -> new Job(n, JOB_MILLIS, 0)).toList());
        Await.until(Duration.ofSeconds(20), () -> doneOf(batch) >= 8, () -> "batch of " + name + ": " + doneOf(batch) + " done");

        int doneAtStart = doneOf(batch);
        long start = System.nanoTime();
        on.run();
        Duration detected = null;
        long lastDuring = start;
        while (System.nanoTime() - start < length.toNanos()) {
            if (detected == null && worker.health().state() != WorkerHealth.State.CONSUMING) {
                detected = Duration.ofNanos(System.nanoTime() - start);
            }
            if (System.nanoTime() - lastDuring > 300_000_000L) {
                during.run();
                lastDuring = System.nanoTime();
            }
            RedisServer.sleep(20);
        }
        int doneAtHeal = doneOf(batch);
        proxy.heal();
        long healed = System.nanoTime();
        // Until work completes again, the fault may still show in the health (a call caught by it).
        while (doneOf(batch) == doneAtHeal && doneAtHeal < JOBS) {
            if (detected == null && worker.health().state() != WorkerHealth.State.CONSUMING) {
                detected = Duration.ofNanos(System.nanoTime() - start);
            }
            if (System.nanoTime() - healed > RESUME_WITHIN.toNanos()) {
                throw new AssertionError(name + ": nothing completes within " + RESUME_WITHIN + " after the fault ends; health "
                        + worker.health() + "; proxy accepted " + proxy.accepted() + " connections");
            }
            RedisServer.sleep(20);
        }
        Duration resumed = Duration.ofNanos(System.nanoTime() - healed);
        Await.until(Duration.ofSeconds(40), () -> doneOf(batch) == JOBS,
                () -> name + ": " + doneOf(batch) + " of " + JOBS + " done; health " + worker.health()
                        + "; queue " + producer.queueStats(queue));
        Await.until(Duration.ofSeconds(10), () -> worker.health().state() == WorkerHealth.State.CONSUMING,
                () -> name + ": health " + worker.health());

        Map<Integer, Long> runs = ledger.runs();
        long executions = batch.stream().mapToLong(n -> runs.getOrDefault(n, 0L)).sum();
        long laterAttempts = ledger.attempts().stream().map(a -> a.split(":"))
                .filter(a -> batch.contains(Integer.parseInt(a[0])) && !a[1].equals("1")).count();
        Outcome outcome = new Outcome(name, JOBS, executions, executions - JOBS, JOBS - doneOf(batch), laterAttempts, detected, resumed);
        report.add(String.format("NETFAULT %s: jobs=%d doneDuringFault=%d runs=%d duplicates=%d lost=%d laterAttempts=%d detected=%s"
                        + " resumedAfter=%d ms connections=%d resets=%d", name, JOBS, doneAtHeal - doneAtStart, executions,
                outcome.duplicates(), outcome.lost(), laterAttempts, detected == null ? "no" : detected.toMillis() + " ms", resumed.toMillis(), proxy.accepted(),
                proxy.resets()));
        return outcome;
    }

    private int doneOf(Set<Integer> batch) {
        Set<Integer> done = ledger.done();
        done.retainAll(batch);
        return done.size();
    }
}
