package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.binomic.core.WorkerHealth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master supervising real worker JVMs. Each worker has its own embedded broker, which is all
 * supervision needs; the same faults against Redis, with messages counted, are in binomic-it.
 */
class MasterTest {
    private static final System.Logger LOG = System.getLogger(MasterTest.class.getName());
    private static final Duration HEARTBEAT = Duration.ofMillis(200);
    private static final Duration HEARTBEAT_TIMEOUT = Duration.ofSeconds(1);
    /**
     * How long a test waits for what the master reports, and how long a worker JVM may take to reach RUNNING: a JVM
     * start that takes half a second on a quiet machine takes tens of seconds at a load of 20 on two cores, and a start
     * timeout that fires turns a slow start into a start-up failure the test did not stage. Waits end at the event, so
     * a long bound costs nothing when the machine is quiet.
     */
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<MasterEvent> events = new CopyOnWriteArrayList<>();
    private Master master;

    private MasterConfig.Builder config() { return config("memory://", 1); }

    private MasterConfig.Builder config(String brokerUrl, int workers) { return config(brokerUrl, workers, Duration.ofMillis(500)); }

    /** Each setting is given once: a test that needs another broker, more workers or a longer grace says so here. */
    private MasterConfig.Builder config(String brokerUrl, int workers, Duration shutdownGrace) {
        return MasterConfig.builder()
                .brokerUrl(brokerUrl)
                .queues(List.of("q"))
                .workers(workers)
                .concurrency(2)
                .heartbeatInterval(HEARTBEAT)
                .heartbeatTimeout(HEARTBEAT_TIMEOUT)
                .startTimeout(START_TIMEOUT)
                .shutdownGrace(shutdownGrace)
                .killGrace(Duration.ofMillis(300))
                .restartBackoffInitial(Duration.ofMillis(250))
                .restartBackoffMax(Duration.ofSeconds(1))
                .stateDirectory(dir)
                .jvmOptions(TestJvm.OPTIONS);
    }

    private Master start(MasterConfig.Builder config) {
        master = new Master(config.build(), events::add).start();
        return master;
    }

    @AfterEach
    void stopMaster() {
        if (master != null) {
            master.close();
        }
    }

    private <E extends MasterEvent> E awaitEvent(Class<E> type, Predicate<E> condition) {
        Await.until(WAIT, () -> type.getSimpleName() + " among " + events, () -> find(type, condition) != null);
        return find(type, condition);
    }

    private <E extends MasterEvent> E find(Class<E> type, Predicate<E> condition) {
        return events.stream().filter(type::isInstance).map(type::cast).filter(condition).findFirst().orElse(null);
    }

    private <E extends MasterEvent> List<E> all(Class<E> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Test
    void workersRunWithTheDefaultJvmOptionsBeforeTheConfiguredOnes() {
        assumeTrue(JvmOptions.inherited(System.getenv()).isEmpty(), "options inherited from the environment replace defaults");
        List<String> configured = List.of("-XX:TieredStopAtLevel=1", "-Xshare:auto");
        start(MasterConfig.builder().brokerUrl("memory://").queues(List.of("q")).workers(1).concurrency(2)
                .heartbeatInterval(HEARTBEAT).heartbeatTimeout(HEARTBEAT_TIMEOUT).startTimeout(START_TIMEOUT)
                .shutdownGrace(Duration.ofMillis(500)).killGrace(Duration.ofMillis(300)).stateDirectory(dir).jvmOptions(configured));
        long pid = awaitEvent(MasterEvent.Running.class, e -> true).pid();

        List<String> arguments = List.of(ProcessHandle.of(pid).orElseThrow().info().arguments().orElseThrow());
        List<String> expected = List.of("--enable-preview", "-XX:+UseSerialGC", "-Xms80m", "-Xmn64m", "-Xmx97m",
                "-XX:TrimNativeHeapInterval=10000", "-XX:TieredStopAtLevel=1", "-Xshare:auto");
        assertEquals(expected, arguments.subList(0, expected.size()), "the worker's command line: " + arguments);
    }

    @Test
    void killedWorkerIsReplacedByANewProcessWithAFreshHeartbeat() {
        WorkerSlots.Slot slot = start(config()).slots().slot(0);
        long first = awaitEvent(MasterEvent.Running.class, e -> true).pid();
        assertEquals(first, slot.pid());

        ProcessHandle.of(first).orElseThrow().destroyForcibly(); // SIGKILL
        MasterEvent.Replaced replaced = awaitEvent(MasterEvent.Replaced.class, e -> true);

        assertEquals(MasterEvent.Cause.EXITED, replaced.cause());
        assertEquals(first, replaced.oldPid());
        assertNotEquals(first, replaced.newPid());
        assertEquals(replaced.newPid(), slot.pid(), "the slot shows the new worker");
        assertEquals(WorkerState.RUNNING, slot.state());
        assertTrue(System.currentTimeMillis() - slot.heartbeatMillis() < HEARTBEAT_TIMEOUT.toMillis(), "fresh heartbeat");
        MasterEvent.Exited exited = awaitEvent(MasterEvent.Exited.class, e -> e.pid() == first);
        assertEquals(137, exited.exitCode(), "128 + SIGKILL");
        assertTrue(all(MasterEvent.RestartScheduled.class).isEmpty(), "the first restart after a failure waits for nothing");
        LOG.log(System.Logger.Level.INFO, "killed worker: detection to spawn {0} ms, to running {1} ms",
                replaced.detectionToSpawn().toMillis(), replaced.detectionToRunning().toMillis());
    }

    @Test
    void frozenWorkerIsDetectedAsHungWithinTheTimeoutKilledAndReplaced() {
        WorkerSlots.Slot slot = start(config()).slots().slot(0);
        long frozen = awaitEvent(MasterEvent.Running.class, e -> true).pid();

        long frozenAt = System.nanoTime();
        Await.signal(frozen, "STOP");
        MasterEvent.Hung hung = awaitEvent(MasterEvent.Hung.class, e -> e.pid() == frozen);
        Duration detectedAfter = Duration.ofNanos(System.nanoTime() - frozenAt);

        // Not before the timeout (the last heartbeat may be up to one interval older than the freeze),
        // and not much after it: one check period plus scheduling slack on a busy machine.
        assertTrue(detectedAfter.compareTo(HEARTBEAT_TIMEOUT.minus(HEARTBEAT)) >= 0, "detected too early: " + detectedAfter);
        assertTrue(detectedAfter.compareTo(HEARTBEAT_TIMEOUT.plusSeconds(3)) <= 0, "detected too late: " + detectedAfter);
        assertTrue(hung.silentFor().compareTo(HEARTBEAT_TIMEOUT) > 0);

        MasterEvent.Terminated terminated = awaitEvent(MasterEvent.Terminated.class, e -> e.pid() == frozen);
        assertTrue(terminated.killed(), "a stopped JVM cannot act on SIGTERM: it takes SIGKILL");
        MasterEvent.Replaced replaced = awaitEvent(MasterEvent.Replaced.class, e -> true);
        assertEquals(MasterEvent.Cause.HUNG, replaced.cause());
        assertNotEquals(frozen, replaced.newPid());
        assertEquals(replaced.newPid(), slot.pid());
        assertFalse(ProcessHandle.of(frozen).map(ProcessHandle::isAlive).orElse(false), "the frozen worker is gone");
        LOG.log(System.Logger.Level.INFO, "frozen worker: freeze to detection {0} ms, detection to spawn {1} ms, to running {2} ms",
                detectedAfter.toMillis(), replaced.detectionToSpawn().toMillis(), replaced.detectionToRunning().toMillis());
    }

    /**
     * Found by an outside tester: on a host where a worker JVM took longer to start than the start timeout,
     * the master killed every worker just before it ran, for ever. A start timeout no JVM can meet (100 ms)
     * now gets each next worker of the slot twice the wait, until one runs.
     */
    @Test
    void workersThatDoNotStartInTimeGetLongerAndLongerUntilOneRuns() {
        MasterConfig.Builder slow = MasterConfig.builder().brokerUrl("memory://").queues(List.of("q")).workers(1).concurrency(2)
                .heartbeatInterval(HEARTBEAT).heartbeatTimeout(HEARTBEAT_TIMEOUT).startTimeout(Duration.ofMillis(100))
                .shutdownGrace(Duration.ofMillis(500)).killGrace(Duration.ofMillis(300)).restartBackoffInitial(Duration.ofMillis(50))
                .restartBackoffMax(Duration.ofMillis(100)).stateDirectory(dir).jvmOptions(TestJvm.OPTIONS);
        start(slow);
        awaitEvent(MasterEvent.Running.class, e -> true);
        List<Long> waited = all(MasterEvent.Hung.class).stream().map(e -> e.silentFor().toMillis()).toList();
        assertFalse(waited.isEmpty(), "no JVM reaches RUNNING in 100 ms: " + events);
        for (int i = 0; i < waited.size(); i++) {
            assertTrue(waited.get(i) >= 100L << i, "the start wait doubles each time: " + waited);
        }
    }

    @Test
    void workerThatFailsAtStartUpIsRestartedWithGrowingBackoffNotSpun() throws Exception {
        WorkerSlots.Slot slot = start(config("nosuch://nowhere", 1)).slots().slot(0);
        awaitEvent(MasterEvent.RestartScheduled.class, e -> e.failureStreak() == 5);
        // The slot says what the master knows: the worker is gone and when the next one starts.
        SlotSnapshot waiting = slot.snapshot();
        assertEquals(Supervision.RESTART_PENDING, waiting.supervision(), waiting.toString());
        assertTrue(waiting.nextStartMillis() > System.currentTimeMillis() - 200, waiting.toString());
        long windowStart = System.nanoTime();
        Await.sleep(2_000);
        int spawnsInWindow = (int) events.stream().filter(MasterEvent.Spawned.class::isInstance).count();
        master.close();
        Duration window = Duration.ofNanos(System.nanoTime() - windowStart);

        List<Long> delays = all(MasterEvent.RestartScheduled.class).stream().map(e -> e.delay().toMillis()).toList();
        assertEquals(List.of(250L, 500L, 1000L, 1000L), delays.subList(0, 4), "doubling from the initial wait up to the cap");
        // By the fifth failure the wait is the 1 s cap: a 2 s window holds at most two more starts.
        int spawnsBefore = 5;
        assertTrue(spawnsInWindow - spawnsBefore <= 3, spawnsInWindow + " starts, " + (spawnsInWindow - spawnsBefore)
                + " of them in " + window.toMillis() + " ms");
        List<MasterEvent.Exited> exits = all(MasterEvent.Exited.class);
        String log = Files.readString(exits.getFirst().logFile());
        // Exit 3 is the worker's own start-up failure; a JVM that could not even boot on a loaded
        // machine exits 1, which is a start-up failure just as well.
        assertTrue(exits.stream().allMatch(e -> e.exitCode() != 0 && e.beforeRunning()), exits + "\n" + log);
        assertTrue(exits.stream().filter(e -> e.exitCode() == 3).count() >= 4, exits + "\n" + log);
        assertTrue(log.contains("start-up failed") && log.contains("nosuch"), log);
        // The master repeats the worker's own reason, so an operator need not open the log to read it.
        assertTrue(exits.stream().filter(e -> e.exitCode() == 3)
                .allMatch(e -> e.startupFailure().contains("start-up failed") && e.startupFailure().contains("nosuch")), exits + "\n" + log);
        assertTrue(log.contains("(incarnation 5)"), "one marker per start in the log file");
    }

    /**
     * A worker that served and was then killed is no start-up failure. Killed again and again
     * shortly after it came up, it is restarted at once every time, rather than each kill within a
     * heartbeat timeout extending a failure streak until the slot waits 60 s.
     */
    @Test
    void workerKilledAgainAndAgainAfterServingIsRestartedAtOnceEveryTime() {
        start(config());
        for (int kill = 1; kill <= 3; kill++) {
            int incarnation = kill;
            MasterEvent.Running running = awaitEvent(MasterEvent.Running.class,
                    e -> e.pid() == find(MasterEvent.Spawned.class, s -> s.incarnation() == incarnation).pid());
            Await.sleep(SlotSupervisor.SERVED.toMillis() / 2 + HEARTBEAT.toMillis()); // served, well within the 1 s timeout
            ProcessHandle.of(running.pid()).orElseThrow().destroyForcibly();
            awaitEvent(MasterEvent.Spawned.class, e -> e.incarnation() == incarnation + 1);
        }
        awaitEvent(MasterEvent.Running.class, e -> e.pid() == find(MasterEvent.Spawned.class, s -> s.incarnation() == 4).pid());
        assertEquals(List.of(), all(MasterEvent.RestartScheduled.class), "no restart waited: " + events);
        // "At once" against the backoff's cap and the 60 s streak this guards against; the spawn itself may take a few
        // seconds on a loaded machine.
        assertTrue(all(MasterEvent.Replaced.class).stream().allMatch(r -> r.detectionToSpawn().toMillis() < 5_000), events.toString());
    }

    /**
     * A worker that is alive and beating but says it is not consuming is
     * replaced like a hung one, and its reason is reported. The test plays the worker's health
     * report (the real worker reports consuming, so the test keeps overwriting it).
     */
    @Test
    void workerThatReportsItIsNotConsumingIsReplacedAndItsProblemReported() {
        WorkerSlots.Slot slot = start(config()).slots().slot(0);
        long stuck = awaitEvent(MasterEvent.Running.class, e -> true).pid();
        // It consumed first (the master saw that), so it served: its replacement starts at once.
        Await.until(WAIT, "the worker reports consuming", () -> slot.health() == SlotHealth.CONSUMING);
        Await.sleep(HEARTBEAT.toMillis() * 2);

        WorkerHealth notConsuming = new WorkerHealth(WorkerHealth.State.STALLED, Duration.ofSeconds(40), Duration.ZERO, 3, Optional.of("fetch loop stalled"));
        Thread reporter = Thread.ofPlatform().daemon().start(() -> {
            while (!Thread.currentThread().isInterrupted() && slot.pid() == stuck) {
                slot.health(notConsuming);
                LockSupport.parkNanos(100_000); // often enough to overwrite the worker's own reports, without burning a core
            }
        });
        try {
            MasterEvent.NotConsuming seen = awaitEvent(MasterEvent.NotConsuming.class, e -> e.pid() == stuck);
            assertEquals("fetch loop stalled", seen.problem());
            MasterEvent.Replaced replaced = awaitEvent(MasterEvent.Replaced.class, e -> e.oldPid() == stuck);
            assertEquals(MasterEvent.Cause.NOT_CONSUMING, replaced.cause());
            assertFalse(ProcessHandle.of(stuck).map(ProcessHandle::isAlive).orElse(false), "the stuck worker is gone");
            assertTrue(all(MasterEvent.RestartScheduled.class).isEmpty(), "it served: replaced at once");
            assertTrue(all(MasterEvent.Hung.class).isEmpty(), "its heartbeat never stopped: " + events);
        } finally {
            reporter.interrupt();
        }
    }

    /**
     * A worker that cannot reach the broker holds the outcomes it could not write and resumes by
     * itself: replacing it would lose them (their tasks would run again), so the master leaves it.
     */
    @Test
    void workerThatReportsTheBrokerUnreachableIsLeftToRecover() {
        WorkerSlots.Slot slot = start(config()).slots().slot(0);
        long waiting = awaitEvent(MasterEvent.Running.class, e -> true).pid();
        Await.until(WAIT, "the worker reports consuming", () -> slot.health() == SlotHealth.CONSUMING);
        WorkerHealth unreachable = new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, Duration.ofSeconds(40), Duration.ofSeconds(40),
                120, Optional.of("fetching has failed for 40 s: connection refused"));
        Thread reporter = Thread.ofPlatform().daemon().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                slot.health(unreachable);
                LockSupport.parkNanos(100_000); // often enough to overwrite the worker's own reports, without burning a core
            }
        });
        try {
            Await.until(WAIT, "the slot shows the broker unreachable", () -> slot.health() == SlotHealth.BROKER_UNREACHABLE);
            Await.sleep(HEARTBEAT.toMillis() * 6);
            assertEquals(waiting, slot.pid(), "the same worker still runs: " + events);
            assertTrue(all(MasterEvent.NotConsuming.class).isEmpty(), events.toString());
            assertTrue(all(MasterEvent.Replaced.class).isEmpty(), events.toString());
        } finally {
            reporter.interrupt();
        }
    }

    /**
     * A worker that is never consuming (broker reachable at start, fetches failing) did not serve:
     * its replacements back off like start-up failures instead of spinning JVM starts.
     */
    @Test
    void workerThatNeverConsumesIsReplacedWithBackoff() {
        WorkerSlots.Slot slot = start(config()).slots().slot(0);
        WorkerHealth notConsuming = new WorkerHealth(WorkerHealth.State.STALLED, Duration.ZERO, Duration.ZERO, 0, Optional.of("fetch failing"));
        Thread reporter = Thread.ofPlatform().daemon().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                if (slot.state() == WorkerState.RUNNING) {
                    slot.health(notConsuming);
                }
                LockSupport.parkNanos(100_000); // often enough to overwrite the worker's own reports, without burning a core
            }
        });
        try {
            MasterEvent.RestartScheduled waited = awaitEvent(MasterEvent.RestartScheduled.class, e -> true);
            assertEquals(2, waited.failureStreak(), events.toString());
            assertTrue(all(MasterEvent.NotConsuming.class).size() >= 2, events.toString());
        } finally {
            reporter.interrupt();
        }
    }

    /**
     * The master judges heartbeats on its own monotonic clock. A worker whose heartbeats carry a
     * wall-clock time an hour behind (what an NTP step does to a reader that compares wall clocks)
     * stays a live worker, not one killed as hung.
     */
    @Test
    void heartbeatsWithASteppedWallClockDoNotMakeALiveWorkerLookHung() {
        WorkerSlots.Slot slot = start(config()).slots().slot(0);
        long pid = awaitEvent(MasterEvent.Running.class, e -> true).pid();

        long until = System.nanoTime() + HEARTBEAT_TIMEOUT.multipliedBy(3).toNanos();
        while (System.nanoTime() < until) {
            slot.heartbeat(System.currentTimeMillis() - Duration.ofHours(1).toMillis());
            Await.sleep(HEARTBEAT.toMillis() / 4);
        }

        assertTrue(all(MasterEvent.Hung.class).isEmpty(), "no worker judged hung: " + events);
        assertEquals(pid, slot.pid(), "the same worker still runs");
    }

    @Test
    void closeDrainsEveryWorkerAndReturnsWhenAllAreGone() {
        // A grace a worker JVM's exit meets on a loaded machine too: idle workers exit at once, so it costs nothing unless a
        // worker ignores the drain, which still ends in its kill at the grace's end and fails the test.
        Master started = start(config("memory://", 2, Duration.ofSeconds(5)));
        Await.until(WAIT, () -> "two running workers among " + events, () -> all(MasterEvent.Running.class).size() == 2);
        List<Long> pids = all(MasterEvent.Running.class).stream().map(MasterEvent.Running::pid).toList();

        started.close();

        List<MasterEvent.Drained> drained = all(MasterEvent.Drained.class);
        assertEquals(2, drained.size(), events.toString());
        assertTrue(drained.stream().allMatch(d -> d.exitCode() == 0 && !d.killed()), drained.toString());
        assertTrue(pids.stream().noneMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)));
        assertTrue(started.awaitTermination(Duration.ZERO));
    }
}
