package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.core.BrokerCapabilities;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.it.ChaosReport.Fault;
import io.binomic.it.ChaosReport.Kind;
import io.binomic.it.TestApp.Job;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One chaos run: a master and its worker JVMs run a mixed workload on the Redis of a
 * {@link ChaosTarget} while faults strike on schedules drawn from one seeded {@link Random}: worker
 * JVMs killed and frozen past their lease and the master itself SIGTERMed and started again, and
 * the target's own Redis faults. Every execution goes to a {@link ChaosLedger} outside that Redis;
 * at quiescence {@link ChaosReport} counts what was lost (nothing may be) and lays every duplicate
 * at the door of the fault that explains it (none may be left unexplained). {@link ChaosIT} runs it
 * on one Redis, {@link ClusterChaosIT} on a Redis Cluster.
 */
final class ChaosDriver {
    /**
     * A run's dimensions. The lease is what the targets are measured against: a Redis outage
     * shorter than {@code lease - lease / 4} must cause no duplicate; the long outages of the long
     * size outlast it on purpose, and may.
     */
    record Size(String name, int tasks, Duration phase, int workers, int concurrency, Duration lease, Duration heartbeat,
                Duration heartbeatTimeout, Duration shortOutage, Duration longOutageMin, Duration longOutageMax,
                Duration processGapMin, Duration processGapMax, Duration redisGapMin, Duration redisGapMax, Duration delay,
                Duration tick, int batch, Duration quiescence) {

        static Size fromSystemProperties() {
            if ("long".equals(System.getProperty("chaos.size"))) {
                int tasks = Integer.parseInt(property("chaos.tasks", "100000"));
                Duration phase = Duration.ofSeconds(Math.round(Double.parseDouble(property("chaos.minutes", "10")) * 60));
                return new Size("long", tasks, phase, 3, 32, Duration.ofSeconds(20), Duration.ofSeconds(1), Duration.ofSeconds(30),
                        Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(3),
                        Duration.ofSeconds(8), Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofSeconds(5),
                        Duration.ofSeconds(2), 200, Duration.ofMinutes(15));
            }
            return new Size("short", 2000, Duration.ofSeconds(30), 2, 16, Duration.ofSeconds(5), Duration.ofMillis(500),
                    Duration.ofSeconds(10), Duration.ofMillis(2500), null, null, Duration.ofMillis(2500), Duration.ofSeconds(5),
                    Duration.ofSeconds(4), Duration.ofSeconds(7), Duration.ofSeconds(2), Duration.ofSeconds(2), 50,
                    Duration.ofSeconds(60));
        }

        /** Long enough for the longest task, which a draining worker lets finish. */
        Duration shutdownGrace() {
            return longTaskMax().plusSeconds(3);
        }

        Duration longTaskMax() {
            return lease.plusSeconds(2);
        }

        /** Faults of the worker JVMs and the master, one cycle shuffled at a time. */
        List<String> processCycle() {
            return name.equals("long")
                    ? List.of("SIGKILL", "SIGKILL", "SIGKILL", "SIGKILL", "SIGSTOP", "SIGKILL", "SIGKILL", "SIGKILL", "SIGSTOP",
                            "MASTER_RESTART")
                    : List.of("SIGKILL", "SIGKILL", "SIGKILL", "SIGSTOP", "MASTER_RESTART");
        }

        /** The same size with {@code count} jobs. */
        Size withTasks(int count) {
            return new Size(name, count, phase, workers, concurrency, lease, heartbeat, heartbeatTimeout, shortOutage, longOutageMin,
                    longOutageMax, processGapMin, processGapMax, redisGapMin, redisGapMax, delay, tick, batch, quiescence);
        }

        /** Share of long tasks: about 8 slots busy with them over the run. */
        double longShare() {
            return Math.min(0.015, 8.0 * phase.toMillis() / longTaskMax().toMillis() / tasks);
        }
    }

    /**
     * A file holding the class path of an older build: one worker of the run (and the master that
     * starts it) is that build's, the rest this one's, on the same queues. Off by default. The file
     * names, in this order: the chaos application ({@link ChaosJobs} and what it uses, from this
     * source tree) compiled against the old build's jars, so both builds run the same tasks; the
     * old build's binomic-it classes; and the old binomic-it test class path
     * ({@code mvn package dependency:build-classpath -Dmdep.includeScope=test -pl binomic-it -am}).
     * The recipe is in module-info-docs/benchmark-log-2026-12-03.md.
     */
    static final String OLD_WORKER_PROPERTY = "chaos.oldWorker";

    /** The old build's class path, or null when the run has no old worker. */
    static String oldClassPath() {
        String file = property(OLD_WORKER_PROPERTY, null);
        if (file == null) {
            return null;
        }
        try {
            String classPath = Files.readString(Path.of(file)).strip();
            if (classPath.isEmpty()) {
                throw new IllegalArgumentException("-D" + OLD_WORKER_PROPERTY + "=" + file + " is empty: write the old build's class"
                        + " path into it (see " + OLD_WORKER_PROPERTY + " in ChaosDriver), or leave the property out");
            }
            return classPath;
        } catch (IOException e) {
            throw new IllegalArgumentException("-D" + OLD_WORKER_PROPERTY + "=" + file + " cannot be read (" + e + "): name a file"
                    + " holding the old build's class path, or leave the property out", e);
        }
    }

    static String property(String name, String fallback) {
        String value = System.getProperty(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Under target/, kept after the run: the ledger, the master's log and the worker logs explain a failure. */
    private Path dir;

    private final ChaosTarget target;
    private final Size size;
    private final long seed;
    private Path ledgerDir;
    private ChaosMaster master;
    /**
     * With {@value #OLD_WORKER_PROPERTY}: a second master, of the last release, with one worker JVM
     * on the same queues (the first then has one fewer), killed, frozen and restarted like the rest.
     */
    private ChaosMaster oldMaster;
    private long phaseStart;
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final List<String> problems = new CopyOnWriteArrayList<>();
    /** Redis faults and master restarts never overlap: a master drained while Redis is away could lose no message, but proves less. */
    private final ReentrantLock exclusive = new ReentrantLock();
    /** Submissions pause while a Redis fault is applied (if the target says so), so that no submission is left half-known. */
    private final ReentrantReadWriteLock submitting = new ReentrantReadWriteLock();
    private byte[] kinds;
    /** The batches and workflows, where the target has them. */
    private ChaosFlows flows;
    private volatile int resubmitted;
    private final java.util.Set<Long> oldPids = new java.util.concurrent.ConcurrentSkipListSet<>();

    ChaosDriver(ChaosTarget target, Size size) {
        this.target = target;
        this.size = size;
        this.seed = Long.parseLong(property("chaos.seed", Long.toString(System.nanoTime() % 1_000_000)));
    }

    /** Runs the workload under faults and asserts the report; the target is closed at the end. */
    void run() throws Exception {
        log(target.label() + " seed " + seed + " (repeat with -Dchaos.seed=" + seed + "): " + size);
        Random seeds = new Random(seed);
        Random processRandom = new Random(seeds.nextLong());
        Random redisRandom = new Random(seeds.nextLong());
        Random workload = new Random(seeds.nextLong());
        Random flowWorkload = new Random(seeds.nextLong());
        long testStart = System.currentTimeMillis();

        dir = Path.of("target", target.name() + "-" + size.name()).toAbsolutePath();
        deleteRecursively(dir);
        ledgerDir = dir.resolve("ledger");
        ChaosLedger ledger = new ChaosLedger(ledgerDir);
        flows = target.batches() ? new ChaosFlows(ledgerDir, size.tasks(), target.workflows()) : null;
        Binomic producer = client(ChaosJobs.definitions(size.tick(), size.delay()));
        Binomic secondScheduler = client(ChaosJobs.definitions(size.tick(), size.delay()));
        Binomic sweeper = null;
        try {
            target.prepare(producer);
            String oldClassPath = oldClassPath();
            if (oldClassPath == null) {
                master = new ChaosMaster(dir, ledgerDir, size, target.broker(), problems);
            } else {
                master = new ChaosMaster("master", dir, ledgerDir, size, size.workers() - 1, null, target.broker(), problems);
                oldMaster = new ChaosMaster("old-master", dir, ledgerDir, size, 1, oldClassPath, target.broker(), problems);
                oldMaster.start();
                noteOldPids();
                log("old worker (" + OLD_WORKER_PROPERTY + "): pids " + oldMaster.running().stream().map(SlotSnapshot::pid).toList());
            }
            master.start();
            phaseStart = System.currentTimeMillis();
            long phaseEnd = phaseStart + size.phase().toMillis();
            log("workers running after " + (phaseStart - testStart) + " ms; faults and submissions for " + size.phase().toSeconds() + " s");

            Thread submitter = Thread.ofPlatform().name("chaos-submitter").start(() -> {
                try {
                    submit(producer, workload, phaseEnd);
                } catch (RuntimeException e) {
                    problems.add("the submitter gave up: " + e);
                }
            });
            Thread flowSubmitter = ChaosFlows.submitting(flows, producer, flowWorkload, phaseStart, phaseEnd, submitting.readLock(),
                    problems);
            Thread processFaults = Thread.ofPlatform().name("chaos-process-faults").start(
                    () -> faults(processRandom, size.processCycle(), size.processGapMin(), size.processGapMax(), phaseEnd));
            Thread redisFaults = Thread.ofPlatform().name("chaos-redis-faults").start(
                    () -> faults(redisRandom, target.redisCycle(size), size.redisGapMin(), size.redisGapMax(), phaseEnd));
            submitter.join();
            flowSubmitter.join();
            processFaults.join();
            redisFaults.join();
            long faultsOver = System.currentTimeMillis();
            log("faults over at +" + (faultsOver - phaseStart) / 1000 + " s; waiting for quiescence");

            boolean quiet = awaitQuiescence(producer, faultsOver + size.quiescence().toMillis());
            log("quiescence " + (quiet ? "reached" : "NOT reached") + " at +" + (System.currentTimeMillis() - phaseStart) / 1000 + " s");
            if (quiet) {
                Thread.sleep(size.lease().toMillis() + 2000); // room for a wrongful late execution to show
            }
            Map<String, QueueStats> atQuiescence = stats(producer);
            producer.close();
            secondScheduler.close();
            long schedulersClosed = System.currentTimeMillis();
            master.stop();
            if (oldMaster != null) {
                oldMaster.stop();
            }
            // Ticks fired while the master drained have no worker left: a worker of this JVM runs them (and schedules none).
            Binomic.Builder sweeping = Binomic.builder().config(TestApp.config(target.broker(), ChaosJobs.TICK_QUEUE, size.lease()));
            ChaosJobs.tasks(ledger, size.tick(), size.delay()).forEach(sweeping::handle);
            sweeper = sweeping.build().start();
            QueueStats ticksAfterDrain = sweeper.queueStats(ChaosJobs.TICK_QUEUE);
            sweepTicks(sweeper);

            BitSet dead = new BitSet();
            List<String> deadReasons = new ArrayList<>();
            deadLetters(sweeper, dead, deadReasons);
            ChaosReport report = new ChaosReport(ChaosLedger.read(ledgerDir), kinds, dead, faults, size.lease().toMillis(),
                    size.concurrency(), phaseStart, size.tick().toMillis(), phaseStart + 2 * size.tick().toMillis(),
                    schedulersClosed - 2 * size.tick().toMillis());

            List<String> out = new ArrayList<>();
            out.add(target.label() + " RESULT seed " + seed + ", " + size.name() + " run: " + kinds.length + " jobs over " + size.phase().toSeconds()
                    + " s, " + size.workers() + " worker JVMs x " + size.concurrency() + ", lease " + size.lease().toSeconds()
                    + " s, took " + (System.currentTimeMillis() - testStart) / 1000 + " s");
            out.addAll(target.describe());
            if (oldMaster != null) {
                out.add("mixed fleet: 1 of the " + size.workers() + " worker JVMs (and its master) from the class path in "
                        + property(OLD_WORKER_PROPERTY, null) + "; its pids: " + oldPids + "; its log: " + oldMaster.log());
            }
            out.addAll(report.lines());
            ChaosFlowCheck flowCheck = flows == null ? null : flows.check(sweeper, report::cause);
            out.addAll(flowCheck == null ? List.of() : flowCheck.lines());
            out.add("left at quiescence: " + atQuiescence.values().stream().map(s -> s.queue() + " ready " + s.ready() + " pending "
                    + s.pending() + " delayed " + s.delayed()).toList() + "; ticks after the master drained: pending "
                    + ticksAfterDrain.pending() + ", ready " + ticksAfterDrain.ready() + " (run by a final sweep)");
            int[] limitedAtOnce = limitedAtOnce(ChaosLedger.read(ledgerDir));
            int slotsLeft;
            try (io.binomic.api.spi.Broker inspector = target.inspector()) {
                inspector.start(List.of());
                slotsLeft = BrokerCapabilities.flowLimits(inspector).slotsHeld(ChaosJobs.QUEUE_A, "t:" + ChaosJobs.LIMITED);
            }
            out.add("concurrency limit " + ChaosJobs.LIMIT + ": at most " + limitedAtOnce[0] + " running at once (runs in a frozen JVM"
                    + " left out: its deliveries were taken over, slots with them), " + limitedAtOnce[1] + " counting them; slots held"
                    + " at the end: " + slotsLeft);
            out.add("dead letters: " + (deadReasons.isEmpty() ? "none" : deadReasons));
            out.add("submissions retried after a failure: " + resubmitted + " messages");
            out.add("problems: " + (problems.isEmpty() ? "none" : problems));
            faults.forEach(f -> out.add("  fault " + report.describe(f)));
            out.forEach(ChaosDriver::log);
            Files.write(dir.resolve("result.txt"), out, StandardCharsets.UTF_8);

            List<String> failures = new ArrayList<>(report.failures);
            failures.addAll(flowCheck == null ? List.of() : flowCheck.failures);
            if (!quiet) {
                failures.add("not quiescent within " + size.quiescence());
            }
            if (report.lost > 0) {
                failures.add(report.lost + " job(s) lost");
            }
            if (report.lostTicks > 0) {
                failures.add(report.lostTicks + " tick message(s) never completed");
            }
            if (report.unexplained() > 0) {
                failures.add(report.unexplained() + " duplicate(s) no fault explains");
            }
            for (QueueStats s : atQuiescence.values()) {
                if (!s.queue().equals(ChaosJobs.TICK_QUEUE) && s.ready() + s.pending() + s.delayed() > 0) {
                    failures.add("left in " + s);
                }
            }
            if (ticksAfterDrain.pending() > 0) {
                failures.add("tick messages left pending by a drained master: " + ticksAfterDrain);
            }
            if (report.ticksFiredTwice > 0) {
                failures.add(report.ticksFiredTwice + " tick(s) fired twice");
            }
            if (!report.ticksMissedOutsideFaults.isEmpty()) {
                failures.add("ticks never fired, with Redis up: " + report.ticksMissedOutsideFaults.stream()
                        .map(t -> Instant.ofEpochMilli(t).toString()).toList());
            }
            if (limitedAtOnce[0] > ChaosJobs.LIMIT) {
                failures.add(limitedAtOnce[0] + " jobs under a concurrency limit of " + ChaosJobs.LIMIT + " ran at once");
            }
            if (slotsLeft != 0) {
                failures.add(slotsLeft + " concurrency slot(s) leaked");
            }
            failures.addAll(target.failures());
            failures.addAll(problems);
            assertEquals(List.of(), failures, "seed " + seed + "; the table:\n" + String.join("\n", out));
        } finally {
            closeQuietly(producer);
            closeQuietly(secondScheduler);
            closeQuietly(sweeper);
            if (master != null) {
                master.destroy();
            }
            if (oldMaster != null) {
                oldMaster.destroy();
            }
            target.close();
        }
    }

    /**
     * The most executions of the limited task running at once: left out, and then counted in, those
     * of a JVM frozen (SIGSTOP) while they ran, whose deliveries (and slots) were taken over by design.
     * An execution ends when its handler returned or threw, or when its JVM was SIGKILLed.
     */
    private int[] limitedAtOnce(List<ChaosLedger.Run> runs) {
        List<long[]> strict = new ArrayList<>();
        List<long[]> all = new ArrayList<>();
        for (ChaosLedger.Run run : runs) {
            if (run.n() < 0 || run.n() >= kinds.length || kinds[run.n()] != Kind.LIMITED.ordinal()) {
                continue;
            }
            long end = run.over();
            if (end < 0) {
                end = faults.stream().filter(f -> f.kind().equals("SIGKILL") && f.pid() == run.pid() && f.start() >= run.start())
                        .mapToLong(Fault::start).min().orElse(run.start() + 100);
            }
            long stop = end;
            boolean frozen = faults.stream().anyMatch(f -> f.kind().equals("SIGSTOP") && f.pid() == run.pid()
                    && f.start() <= stop && f.end() >= run.start());
            all.add(new long[] {run.start(), 1});
            all.add(new long[] {end, -1});
            if (!frozen) {
                strict.add(new long[] {run.start(), 1});
                strict.add(new long[] {end, -1});
            }
        }
        return new int[] {mostAtOnce(strict), mostAtOnce(all)};
    }

    private static int mostAtOnce(List<long[]> events) {
        // an end before a start at the same millisecond: one slot handed from one run to the next
        events.sort(java.util.Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
        int running = 0;
        int most = 0;
        for (long[] e : events) {
            running += (int) e[1];
            most = Math.max(most, running);
        }
        return most;
    }

    /** A client that declares every chaos task and fires the INTERVAL task's ticks; it runs no worker. */
    private Binomic client(List<Task<?, ?>> tasks) {
        return Binomic.builder().config(io.binomic.api.BinomicConfig.builder().broker(target.broker()).build()).tasks(tasks).build()
                .start();
    }

    private static void closeQuietly(Binomic binomic) {
        try {
            if (binomic != null) {
                binomic.close();
            }
        } catch (RuntimeException e) {
            // closed already
        }
    }

    // ---------------------------------------------------------------- the workload

    @SuppressWarnings("unchecked")
    private void submit(Binomic client, Random random, long phaseEnd) {
        Task<Job, Void> onA = (Task<Job, Void>) client.tasks().find(ChaosJobs.ON_A).orElseThrow();
        Task<Job, Void> onB = (Task<Job, Void>) client.tasks().find(ChaosJobs.ON_B).orElseThrow();
        Task<Job, Void> delayed = (Task<Job, Void>) client.tasks().find(ChaosJobs.DELAYED).orElseThrow();
        Task<Job, Void> limited = (Task<Job, Void>) client.tasks().find(ChaosJobs.LIMITED).orElseThrow();
        kinds = new byte[size.tasks()];
        int batches = (size.tasks() + size.batch() - 1) / size.batch();
        long span = phaseEnd - phaseStart;
        int n = 0;
        for (int b = 0; b < batches; b++) {
            sleepUntil(phaseStart + span * b / batches);
            List<Job> a = new ArrayList<>();
            List<Job> bq = new ArrayList<>();
            List<Job> later = new ArrayList<>();
            List<Job> underLimit = new ArrayList<>();
            for (int i = 0; i < size.batch() && n < size.tasks(); i++, n++) {
                Kind kind = kind(random);
                kinds[n] = (byte) kind.ordinal();
                Job job = switch (kind) {
                    case SLEEP, DELAYED -> new Job(n, 5 + random.nextInt(36), 0, false);
                    case CPU -> new Job(n, 5 + random.nextInt(16), 0, true);
                    case FAILS -> new Job(n, 10, 1 + random.nextInt(2), false);
                    case LONG -> new Job(n, size.lease().toMillis() + 1000 + random.nextInt(1000), 0, false);
                    case LIMITED -> new Job(n, 20 + random.nextInt(41), 0, false);
                };
                (kind == Kind.DELAYED ? later : kind == Kind.LIMITED ? underLimit : random.nextBoolean() ? a : bq).add(job);
            }
            // Submissions pause while a Redis fault is applied only where the target asks for it.
            submitting.readLock().lock();
            try {
                submitAll(client, onA, a);
                submitAll(client, onB, bq);
                submitAll(client, delayed, later);
                submitAll(client, limited, underLimit);
            } finally {
                submitting.readLock().unlock();
            }
        }
    }

    private Kind kind(Random random) {
        double r = random.nextDouble();
        if (r < size.longShare()) {
            return Kind.LONG;
        }
        r = random.nextDouble();
        return r < 0.57 ? Kind.SLEEP : r < 0.69 ? Kind.CPU : r < 0.82 ? Kind.FAILS : r < 0.95 ? Kind.DELAYED : Kind.LIMITED;
    }

    /**
     * A submission that fails (the client still reconnecting after a fault) is sent again: its jobs
     * may then exist twice, as two messages, which is why jobs are counted by number and duplicates
     * by message id.
     */
    private void submitAll(Binomic client, Task<Job, Void> task, List<Job> jobs) {
        if (jobs.isEmpty()) {
            return;
        }
        for (int tries = 1; ; tries++) {
            try {
                client.submitAll(task, jobs);
                return;
            } catch (RuntimeException e) {
                if (tries == 60) {
                    throw e;
                }
                resubmitted += jobs.size();
                log("submission of " + jobs.size() + " failed (" + e + "); again in 0.5 s");
                sleep(500);
            }
        }
    }

    // ---------------------------------------------------------------- faults

    /** Applies shuffled cycles of faults with random gaps; the first cycle always completes, so a short run has each fault. */
    private void faults(Random random, List<String> cycle, Duration gapMin, Duration gapMax, long phaseEnd) {
        try {
            for (boolean first = true; ; first = false) {
                List<String> order = new ArrayList<>(cycle);
                Collections.shuffle(order, random);
                for (String kind : order) {
                    sleep(between(random, gapMin, gapMax));
                    if (!first && System.currentTimeMillis() > phaseEnd) {
                        return;
                    }
                    apply(kind, random);
                }
                if (System.currentTimeMillis() > phaseEnd) {
                    return;
                }
            }
        } catch (RuntimeException | Error e) {
            problems.add("fault thread failed: " + e);
            throw e;
        }
    }

    static long between(Random random, Duration min, Duration max) {
        return min.toMillis() + (long) (random.nextDouble() * (max.toMillis() - min.toMillis()));
    }

    private void apply(String kind, Random random) {
        switch (kind) {
            case "SIGKILL" -> {
                SlotSnapshot victim = victim(random);
                if (victim != null) {
                    ChildWorker.signal(victim.pid(), "KILL");
                    // Taken once the signal is surely delivered: no execution of that JVM starts later.
                    long t = System.currentTimeMillis();
                    faults.add(new Fault(kind, victim.pid(), t, t, "slot " + victim.index() + ", " + victim.counters().inFlight()
                            + " running at its last heartbeat"));
                }
            }
            case "SIGSTOP" -> {
                SlotSnapshot victim = victim(random);
                if (victim != null) {
                    // Past the lease, so that its messages are taken over; in the long run every other one also
                    // past the heartbeat timeout, so that the master kills it instead of it waking up.
                    boolean pastHeartbeat = size.name().equals("long") && random.nextBoolean();
                    long freeze = pastHeartbeat ? size.heartbeatTimeout().toMillis() + 8000
                            : size.lease().toMillis() + 1500 + random.nextInt(1000);
                    ChildWorker.signal(victim.pid(), "STOP");
                    long t = System.currentTimeMillis();
                    sleep(freeze);
                    try {
                        ChildWorker.signal(victim.pid(), "CONT");
                    } catch (IllegalStateException gone) {
                        // the master killed it as hung
                    }
                    faults.add(new Fault(kind, victim.pid(), t, System.currentTimeMillis(), "slot " + victim.index() + ", frozen "
                            + freeze + " ms, " + victim.counters().inFlight() + " running at its last heartbeat"
                            + (pastHeartbeat ? ", past the heartbeat timeout" : "")));
                }
            }
            case "MASTER_RESTART" -> {
                exclusive.lock();
                try {
                    ChaosMaster restarted = oldMaster != null && random.nextBoolean() ? oldMaster : master;
                    long t = System.currentTimeMillis();
                    long pid = restarted.pid();
                    int exit = restarted.stop();
                    restarted.start();
                    noteOldPids();
                    faults.add(new Fault(kind, pid, t, System.currentTimeMillis(), "SIGTERM, exit " + exit + ", new "
                            + restarted.name() + " running"));
                } finally {
                    exclusive.unlock();
                }
            }
            default -> redisFault(kind, random);
        }
    }

    /** A running worker JVM of either master, at random; null when none is. */
    private SlotSnapshot victim(Random random) {
        noteOldPids();
        List<SlotSnapshot> running = new ArrayList<>(master.running());
        if (oldMaster != null) {
            running.addAll(oldMaster.running());
        }
        return running.isEmpty() ? null : running.get(random.nextInt(running.size()));
    }

    /** Every pid the old worker had, for the report: its master restarts it after a kill. */
    private void noteOldPids() {
        if (oldMaster != null) {
            oldMaster.running().forEach(s -> oldPids.add(s.pid()));
        }
    }

    private void redisFault(String kind, Random random) {
        exclusive.lock();
        boolean pause = target.pausesSubmissions();
        if (pause) {
            submitting.writeLock().lock();
        }
        try {
            faults.add(target.apply(kind, random, size));
        } finally {
            if (pause) {
                submitting.writeLock().unlock();
            }
            exclusive.unlock();
        }
    }

    // ---------------------------------------------------------------- the end

    /** Every job completed or dead-lettered, and nothing ready, pending or delayed on the job queues. */
    private boolean awaitQuiescence(Binomic client, long deadline) {
        while (System.currentTimeMillis() < deadline) {
            BitSet done = new BitSet(kinds.length);
            for (ChaosLedger.Run run : ChaosLedger.read(ledgerDir)) {
                if (run.n() >= 0 && run.completed()) {
                    done.set(run.n());
                }
            }
            deadLetters(client, done, new ArrayList<>());
            boolean empty = stats(client).values().stream().filter(s -> !s.queue().equals(ChaosJobs.TICK_QUEUE))
                    .allMatch(s -> s.ready() + s.pending() + s.delayed() == 0);
            if (empty && done.cardinality() == kinds.length && (flows == null || flows.done())) {
                return true;
            }
            sleep(1000);
        }
        return false;
    }

    private Map<String, QueueStats> stats(Binomic client) {
        Map<String, QueueStats> stats = new java.util.LinkedHashMap<>();
        for (String queue : ChaosJobs.QUEUES) {
            stats.put(queue, client.queueStats(queue));
        }
        return stats;
    }

    private void sweepTicks(Binomic sweeper) {
        sweeper.startWorker();
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            QueueStats s = sweeper.queueStats(ChaosJobs.TICK_QUEUE);
            if (s.ready() + s.pending() + s.delayed() == 0) {
                return;
            }
            sleep(200);
        }
        problems.add("ticks left after the sweep: " + sweeper.queueStats(ChaosJobs.TICK_QUEUE));
    }

    private static final Pattern JOB_NUMBER = Pattern.compile("\"n\"\\s*:\\s*(\\d+)");

    /** Job numbers (and the reasons) of every dead letter of the job queues. */
    private static void deadLetters(Binomic client, BitSet into, List<String> reasons) {
        for (String queue : ChaosJobs.QUEUES) {
            for (DeadLetter letter : client.deadLetters().list(queue, DeadLetterFilter.all(), 1_000_000)) {
                reasons.add(queue + " " + letter.failure().reason() + " " + letter.failure().errorClass());
                letter.message().ifPresent(m -> {
                    Matcher matcher = JOB_NUMBER.matcher(new String(m.payload(), StandardCharsets.UTF_8));
                    if (matcher.find()) {
                        into.set(Integer.parseInt(matcher.group(1)));
                    }
                });
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    static void log(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (Files.exists(path)) {
            try (var files = Files.walk(path)) {
                for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    static void sleep(long millis) {
        RedisServer.sleep(millis);
    }

    private static void sleepUntil(long epochMillis) {
        long wait = epochMillis - System.currentTimeMillis();
        if (wait > 0) {
            sleep(wait);
        }
    }
}
