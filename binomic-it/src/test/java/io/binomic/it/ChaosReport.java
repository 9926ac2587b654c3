package io.binomic.it;

import io.binomic.it.ChaosLedger.Run;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * What a chaos run did, from the ledger, the fault log and the broker: the table it prints and
 * the failures it asserts. A message counts as completed once one of its executions returned;
 * a message that completed more than once is a duplicate, and each duplicate is laid at the door
 * of the fault that explains it or counted as unexplained.
 */
final class ChaosReport {
    /** The workloads of one run; every message is one of them. */
    enum Kind {
        SLEEP("sleeping, 5-40 ms"),
        CPU("CPU-bound, 5-20 ms"),
        FAILS("fails 1-2 times, then succeeds"),
        LONG("longer than the lease"),
        DELAYED("DELAY task"),
        LIMITED("concurrency limit 2, 20-60 ms");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** One fault as it was applied: {@code pid} is the target process (0 for Redis faults). */
    record Fault(String kind, long pid, long start, long end, String detail) {
        boolean onRedis() {
            return kind.startsWith("REDIS") || kind.equals("CLIENT_KILL");
        }

        /**
         * A Cluster master killed and its replica promoted: writes the replica had not yet received
         * are gone, and with {@code wait.replicas} only the unconfirmed ones: fetches
         * ({@code XREADGROUP}) and lease renewals, which are not waited for. A message fetched or
         * renewed then runs again. Until the killed node is back as the new master's replica no
         * write there is confirmed, so outcomes wait meanwhile.
         */
        boolean failover() {
            return kind.equals("REDIS_FAILOVER");
        }
    }

    /** A duplicate and what explains it ({@code cause} null: nothing does). */
    record Duplicate(UUID id, int n, Run first, int completions, Fault cause) { }

    /** Between a handler's return and the moment its ack is surely in Redis, when Redis is up and the connections are whole. */
    static final long ACK_WINDOW_MILLIS = 5000;

    /**
     * The same after a Redis fault (restart, outage, CLIENT KILL) ends: a settle call caught by it
     * waits for its command timeout (5 s by default) while fetching resumes at once; a kill 3.1 s
     * and one 3.8 s after such faults caught hundreds of finished executions unacked.
     */
    static final long ACK_AFTER_REDIS_FAULT_MILLIS = 8000;

    private final List<Run> runs;
    private final byte[] kinds;
    private final BitSet deadLettered;
    private final List<Fault> faults;
    private final long leaseMillis;
    private final int concurrency;
    private final long phaseStart;
    final Map<Kind, long[]> table = new EnumMap<>(Kind.class);
    final List<Duplicate> duplicates = new ArrayList<>();
    final Map<Fault, Integer> attributed = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();
    long lost;
    long lostTicks;
    long ticksFired;
    long ticksFiredTwice;
    long ticksMissedInFaults;
    final List<Long> ticksMissedOutsideFaults = new ArrayList<>();

    /**
     * @param kinds the kind of each job submitted, by job number (the ordinal)
     * @param deadLettered job numbers found in the dead-letter queues
     * @param tickFrom first tick time that must have fired unless a Redis fault was near
     * @param tickTo last such tick time
     */
    ChaosReport(List<Run> runs, byte[] kinds, BitSet deadLettered, List<Fault> faults, long leaseMillis, int concurrency,
                long phaseStart, long tickMillis, long tickFrom, long tickTo) {
        this.concurrency = concurrency;
        this.runs = runs;
        this.kinds = kinds;
        this.deadLettered = deadLettered;
        this.faults = faults;
        this.leaseMillis = leaseMillis;
        this.phaseStart = phaseStart;
        countJobs();
        findDuplicates();
        countTicks(tickMillis, tickFrom, tickTo);
    }

    private void countJobs() {
        BitSet completed = new BitSet(kinds.length);
        for (Run run : runs) {
            if (run.n() >= 0 && run.completed()) {
                completed.set(run.n());
            }
        }
        for (Kind kind : Kind.values()) {
            table.put(kind, new long[5]);
        }
        for (int n = 0; n < kinds.length; n++) {
            long[] row = table.get(Kind.values()[kinds[n]]);
            row[0]++;
            if (completed.get(n)) {
                row[1]++;
            } else if (deadLettered.get(n)) {
                row[2]++;
            } else {
                row[3]++;
                lost++;
            }
        }
    }

    private final Map<UUID, List<Run>> byMessage = new HashMap<>();

    private void findDuplicates() {
        for (Run run : runs) {
            byMessage.computeIfAbsent(run.id(), id -> new ArrayList<>()).add(run);
        }
        for (Map.Entry<UUID, List<Run>> e : byMessage.entrySet()) {
            int completions = (int) e.getValue().stream().filter(Run::completed).count();
            if (completions < 2) {
                continue;
            }
            Run first = e.getValue().stream().min(Comparator.comparingLong(Run::start)).orElseThrow();
            Fault cause = cause(e.getValue());
            duplicates.add(new Duplicate(e.getKey(), first.n(), first, completions, cause));
            if (cause != null) {
                attributed.merge(cause, 1, Integer::sum);
            }
            if (first.n() >= 0) {
                table.get(Kind.values()[kinds[first.n()]])[4]++;
            }
        }
        duplicates.sort(Comparator.comparingLong(d -> d.first().start()));
        for (Map.Entry<Fault, Integer> e : attributed.entrySet()) {
            Fault fault = e.getKey();
            if (fault.pid() != 0 && e.getValue() > inFlight(fault)) {
                failures.add(e.getValue() + " duplicates laid at " + describe(fault) + ", more than the " + inFlight(fault)
                        + " deliveries that JVM could hold in flight at that moment; the first of them: " + executionsOf(fault, 5));
            }
        }
    }

    /** The executions (pid, start..end from the phase's start) of the first {@code limit} duplicates laid at {@code fault}. */
    private String executionsOf(Fault fault, int limit) {
        return duplicates.stream().filter(d -> d.cause() == fault).limit(limit)
                .map(d -> "job " + d.n() + " " + byMessage.get(d.id()).stream()
                        .map(r -> String.format("pid %d +%.2fs..%s", r.pid(), (r.start() - phaseStart) / 1000.0,
                                r.over() < 0 ? "never" : String.format("+%.2fs", (r.over() - phaseStart) / 1000.0)))
                        .toList())
                .toList().toString();
    }

    /**
     * A SIGKILL or SIGSTOP of a JVM that ran the message while that execution was in flight
     * (running, or returned with its ack not yet surely written); else a Redis outage longer than
     * the lease's margin that an execution's outcome could not outlast, or a Cluster failover that
     * an execution was in flight across, or that handed a message out twice as new
     * ({@link #handedOutTwiceAsNew}). A reshard explains nothing: its keys move whole.
     *
     * <p>When several faults of one JVM catch an execution, the latest one explains it: a JVM
     * frozen, thawed and then killed 2.7 s later had the executions it ran after the thaw caught
     * by both, and laying them at the freeze (whose bound is one slot each, nothing had returned
     * before it) failed a run on 56 duplicates that the kill's bound of hundreds explains.
     */
    Fault cause(List<Run> executions) {
        Fault latest = null;
        for (Fault f : faults) {
            if (f.kind().equals("SIGKILL") || f.kind().equals("SIGSTOP")) {
                for (Run r : executions) {
                    if (r.pid() == f.pid() && caught(r, f) && (latest == null || f.start() > latest.start())) {
                        latest = f;
                    }
                }
            }
        }
        if (latest != null) {
            return latest;
        }
        for (Fault f : faults) {
            if (f.failover() || f.onRedis() && !f.kind().equals("REDIS_RESHARD") && longerThanLeaseMargin(f)) {
                for (Run r : executions) {
                    if (r.start() <= f.end() && (r.over() < 0 || r.over() >= f.start() - ACK_WINDOW_MILLIS)) {
                        return f;
                    }
                }
            }
        }
        return handedOutTwiceAsNew(executions);
    }

    /**
     * The failover that explains a message handed out twice as new (two executions at attempt 1:
     * a reclaim or a retry raises the attempt) whose first execution started during it or up to
     * {@link #ACK_AFTER_REDIS_FAULT_MILLIS} after it ended. A failover does that later than its end:
     * a producer's chunk that the old primary had replicated but not confirmed is sent again whole to
     * the new one once its reply times out (enqueued twice, one message id); and a frozen primary
     * thawed with a worker's {@code XREADGROUP} queued serves it before the worker's client sees
     * the new topology, and drops the entries it handed out when it resyncs, unread on the new one.
     */
    private Fault handedOutTwiceAsNew(List<Run> executions) {
        if (executions.stream().filter(r -> r.attempt() == 1).count() < 2) {
            return null;
        }
        long first = executions.stream().mapToLong(Run::start).min().orElseThrow();
        for (Fault f : faults) {
            if (f.failover() && first >= f.start() && first <= f.end() + ACK_AFTER_REDIS_FAULT_MILLIS) {
                return f;
            }
        }
        return null;
    }

    /**
     * Whether the fault struck execution {@code r} of its JVM in flight. A frozen JVM may have
     * fetched and dispatched a delivery just before the freeze and reach the handler's first line
     * (the ledger's start) only after the thaw: that execution was in flight too.
     */
    private boolean caught(Run r, Fault f) {
        long startedBy = f.kind().equals("SIGSTOP") ? f.end() + ACK_WINDOW_MILLIS : f.start();
        return r.start() <= startedBy && (r.over() < 0 || ackDeadline(r.over()) >= f.start());
    }

    /** An outage at least this long may let a lease lapse (renewals come every lease / 4). */
    boolean longerThanLeaseMargin(Fault f) {
        return f.end() - f.start() >= leaseMillis - leaseMillis / 4;
    }

    /** When the outcome of an execution that returned at {@code end} is surely written: later when Redis was away meanwhile. */
    private long ackDeadline(long end) {
        long deadline = end + ACK_WINDOW_MILLIS;
        boolean moved = true;
        while (moved) {
            moved = false;
            for (Fault f : faults) {
                if (f.onRedis() && f.start() <= deadline && f.end() + ACK_AFTER_REDIS_FAULT_MILLIS > deadline) {
                    deadline = f.end() + ACK_AFTER_REDIS_FAULT_MILLIS;
                    moved = true;
                }
            }
        }
        return deadline;
    }

    /**
     * The most deliveries the fault's JVM can have held in flight when it struck: one per slot
     * (running, or dispatched and not yet at the handler's first line), plus the executions that
     * had returned so shortly before that their acks may not have been written.
     */
    long inFlight(Fault fault) {
        return concurrency + returnedUnacknowledged(fault);
    }

    /** Started and not over when the fault struck (an execution of a killed JVM that never ended counts until its message ran again). */
    long running(Fault fault) {
        return runs.stream().filter(r -> r.pid() == fault.pid() && r.start() <= fault.start()
                && (r.over() >= 0 ? r.over() > fault.start()
                        : byMessage.get(r.id()).stream().noneMatch(o -> o.start() > r.start() && o.start() <= fault.start())))
                .count();
    }

    /** Returned before the fault, but too shortly before (or while Redis was away) for the ack to be surely written. */
    long returnedUnacknowledged(Fault fault) {
        return runs.stream().filter(r -> r.pid() == fault.pid() && r.completed() && r.end() <= fault.start()
                && ackDeadline(r.end()) >= fault.start()).count();
    }

    private void countTicks(long tickMillis, long tickFrom, long tickTo) {
        Map<Long, Set<UUID>> byTick = new TreeMap<>();
        Map<UUID, Boolean> completed = new HashMap<>();
        for (Run run : runs) {
            if (run.n() == ChaosJobs.TICK_N) {
                byTick.computeIfAbsent(run.tick(), t -> new TreeSet<>()).add(run.id());
                completed.merge(run.id(), run.completed(), Boolean::logicalOr);
            }
        }
        ticksFired = byTick.size();
        ticksFiredTwice = byTick.values().stream().filter(ids -> ids.size() > 1).count();
        lostTicks = completed.values().stream().filter(done -> !done).count();
        for (long tick = (tickFrom / tickMillis + 1) * tickMillis; tick <= tickTo; tick += tickMillis) {
            if (byTick.containsKey(tick)) {
                continue;
            }
            long t = tick;
            // A tick due while Redis was away is coalesced with the next one by design (fired once, late).
            boolean nearFault = faults.stream().anyMatch(f -> f.onRedis()
                    && t >= f.start() - tickMillis && t <= f.end() + Math.max(5000, 2 * tickMillis));
            if (nearFault) {
                ticksMissedInFaults++;
            } else {
                ticksMissedOutsideFaults.add(tick);
            }
        }
    }

    String describe(Fault f) {
        return String.format("%s%s at +%.1fs%s (%s)", f.kind(), f.pid() == 0 ? "" : " pid " + f.pid(), (f.start() - phaseStart) / 1000.0,
                f.end() > f.start() ? String.format("..+%.1fs", (f.end() - phaseStart) / 1000.0) : "", f.detail());
    }

    long unexplained() {
        return duplicates.stream().filter(d -> d.cause() == null).count();
    }

    /** The table, one line each, for stdout. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        out.add(String.format("%-32s %10s %10s %14s %6s %11s", "workload", "submitted", "completed", "dead-lettered", "lost",
                "duplicates"));
        long[] all = new long[5];
        for (Kind kind : Kind.values()) {
            long[] row = table.get(kind);
            out.add(String.format("%-32s %10d %10d %14d %6d %11d", kind.label, row[0], row[1], row[2], row[3], row[4]));
            for (int i = 0; i < 5; i++) {
                all[i] += row[i];
            }
        }
        out.add(String.format("%-32s %10d %10d %14d %6d %11d", "all jobs", all[0], all[1], all[2], all[3], all[4]));
        long tickDuplicates = duplicates.stream().filter(d -> d.n() == ChaosJobs.TICK_N).count();
        out.add(String.format("INTERVAL ticks: fired %d, fired twice %d, not run %d, executions completed twice %d, missed while Redis"
                + " was away %d (coalesced by design), missed otherwise %d", ticksFired, ticksFiredTwice, lostTicks, tickDuplicates,
                ticksMissedInFaults, ticksMissedOutsideFaults.size()));
        Map<String, Integer> faultCounts = new TreeMap<>();
        faults.forEach(f -> faultCounts.merge(f.kind(), 1, Integer::sum));
        out.add("faults: " + faultCounts);
        Map<String, Integer> causes = new TreeMap<>();
        for (Duplicate d : duplicates) {
            String cause = d.cause() == null ? "UNEXPLAINED"
                    : d.cause().failover() ? d.cause().kind() + " (writes not yet replicated)"
                    : d.cause().onRedis() ? d.cause().kind() + " longer than the lease margin" : d.cause().kind();
            causes.merge(cause, 1, Integer::sum);
        }
        out.add("duplicates by cause: " + (causes.isEmpty() ? "none" : causes));
        for (Map.Entry<Fault, Integer> e : attributed.entrySet()) {
            Fault f = e.getKey();
            out.add(String.format("  %d duplicate(s) from %s; in flight there then: %s", e.getValue(), describe(f),
                    f.pid() == 0 ? "-" : running(f) + " running + " + returnedUnacknowledged(f) + " returned less than "
                            + ACK_WINDOW_MILLIS / 1000 + " s before (8 s after a Redis fault); bound " + inFlight(f)));
        }
        for (Duplicate d : duplicates) {
            if (d.cause() == null) {
                Run r = d.first();
                out.add(String.format("  UNEXPLAINED: message %s (job %d) completed %d times; first run on pid %d from +%.1fs to %s",
                        d.id(), d.n(), d.completions(), r.pid(), (r.start() - phaseStart) / 1000.0,
                        r.completed() ? String.format("+%.1fs", (r.end() - phaseStart) / 1000.0) : "never returned"));
            }
        }
        return out;
    }
}
