package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.process.Supervision;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkersCommandTest {
    private static final WorkerHealth CONSUMING = new WorkerHealth(WorkerHealth.State.CONSUMING, Duration.ZERO, Duration.ZERO, 0, Optional.empty());

    @TempDir
    Path dir;

    private CliRun run(String... args) {
        return CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("workers needs no broker");
        }, args);
    }

    /** Found by an outside tester: a script that adds --broker to every command got "unknown option --broker" here. */
    @Test
    void aBrokerIsRefusedSayingWhyTheCommandNeedsNone() {
        CliRun run = run("workers", "--broker", "redis://localhost:6379");
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic workers: --broker is not an option here: this command reads the shared memory of a master on this"
                + " machine and needs no broker; leave --broker out, and give --state-dir for a master of another state directory\n"
                + "Run 'binomic workers --help' for its options.\n", run.err());
        assertEquals("binomic workers: unknown option --brokr; did you mean --broker? It is not an option here: this command reads the"
                + " shared memory of a master on this machine and needs no broker; leave --broker out, and give --state-dir for a master"
                + " of another state directory\n" + "Run 'binomic workers --help' for its options.\n", run("workers", "--brokr", "x").err(),
                "a mistyped --broker is named, as in other commands");
        assertEquals("binomic workers: unknown option --bogus\nRun 'binomic workers --help' for its options.\n",
                run("workers", "--bogus").err());
    }

    @Test
    void showsEachSlotWithStateHeartbeatAgeAndCounters() {
        long us = ProcessHandle.current().pid();
        try (WorkerSlots slots = WorkerSlots.create(dir.resolve("workers.slots"), 3, us, Instant.parse("2026-11-30T04:00:00Z"),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            long now = System.currentTimeMillis();
            WorkerSlots.Slot running = slots.slot(0);
            running.pid(1111);
            running.state(WorkerState.RUNNING);
            running.counters(new WorkerCounters(2, 40, 3, 2, 1, 7, 5, 4));
            running.health(CONSUMING);
            running.heartbeat(now - 1_000);
            WorkerSlots.Slot late = slots.slot(1);
            late.pid(2222);
            late.state(WorkerState.RUNNING);
            late.heartbeat(now - 20_000);

            // The ages: a second and 20 s, plus however long a loaded machine takes to run the command.
            CliRun run = run("workers", "--state-dir", dir.toString());

            assertEquals(0, run.exit(), run.toString());
            String[] lines = run.out().split("\n");
            assertEquals("master pid " + us + " running, started 2026-11-30T04:00:00Z, heartbeat every 5000 ms, hung after 15000 ms",
                    lines[0]);
            assertEquals("SLOT   PID  STATE    HEALTH     HEARTBEAT       IN-FLIGHT  SUCCEEDED  HELD  FAILED  RETRIED  DEAD  STALE", lines[1]);
            // 40 returned, 4 of them held with one other outcome: the broker has 36 successes.
            assertTrue(lines[2].matches("   0  1111  RUNNING  consuming  \\d\\.\\ds ago     +2         36     5       3        2     1      7"),
                    lines[2]);
            assertTrue(lines[3].matches("   1  2222  RUNNING  -          2\\d\\.\\ds ago LATE +0          0     0       0        0     0      0"),
                    lines[3]);
            assertEquals("   2     -  EMPTY    -          never                   0          0     0       0        0     0      0", lines[4]);
        }
    }

    /**
     * Found by an outside tester: a worker whose outcomes Redis refused to its ACL user (NOPERM) showed as BROKER
     * UNREACHABLE while Redis answered; the refusal is named, and an outage still is an outage.
     */
    @Test
    void outcomesRefusedForAPermissionShowAsBrokerRefused() {
        long us = ProcessHandle.current().pid();
        try (WorkerSlots slots = WorkerSlots.create(dir.resolve("workers.slots"), 2, us, Instant.parse("2026-11-30T04:00:00Z"),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            long now = System.currentTimeMillis();
            WorkerSlots.Slot refused = slots.slot(0);
            refused.pid(1111);
            refused.state(WorkerState.RUNNING);
            refused.health(new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, Duration.ZERO, Duration.ZERO, 3,
                    Optional.of("Redis refuses writing outcomes (NOPERM) for 3 s: grant ACL SETUSER w +xack; Redis at r:1 refused")));
            refused.heartbeat(now - 1_000);
            WorkerSlots.Slot down = slots.slot(1);
            down.pid(2222);
            down.state(WorkerState.RUNNING);
            down.health(new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, Duration.ZERO, Duration.ZERO, 3,
                    Optional.of("fetching has failed for 3 s: Redis does not answer")));
            down.heartbeat(now - 1_000);

            CliRun run = run("workers", "--state-dir", dir.toString());

            assertEquals(0, run.exit(), run.toString());
            assertTrue(run.out().contains("BROKER REFUSED: Redis refuses writing outcomes (NOPERM) for 3 s: grant ACL SETUSER w +xack;"),
                    run.out());
            assertTrue(run.out().contains("BROKER UNREACHABLE: fetching has failed for 3 s"), run.out());
        }
    }

    /**
     * A SIGKILLed worker's slot keeps its last state and counters; before, {@code binomic workers}
     * showed it as {@code RUNNING, IN-FLIGHT 40} while its restart was pending.
     */
    @Test
    void aDeadWorkerShowsAsDeadWithItsRestartAndNotAsRunning() {
        long us = ProcessHandle.current().pid();
        try (WorkerSlots slots = WorkerSlots.create(dir.resolve("workers.slots"), 3, us, Instant.parse("2026-11-30T04:00:00Z"),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            long now = System.currentTimeMillis();
            WorkerSlots.Slot killed = slots.slot(0);
            killed.pid(1111);
            killed.state(WorkerState.RUNNING);
            killed.counters(new WorkerCounters(40, 100, 0, 0, 0, 0));
            killed.health(CONSUMING);
            killed.heartbeat(now - 1_000);
            killed.supervision(Supervision.RESTART_PENDING, now + 6_500);
            WorkerSlots.Slot stuck = slots.slot(1);
            stuck.pid(2222);
            stuck.state(WorkerState.RUNNING);
            stuck.health(new WorkerHealth(WorkerHealth.State.STALLED, Duration.ofSeconds(40), Duration.ZERO, 0, Optional.of("fetch loop stalled")));
            stuck.heartbeat(now - 1_000);
            WorkerSlots.Slot hung = slots.slot(2);
            hung.pid(3333);
            hung.state(WorkerState.RUNNING);
            hung.health(CONSUMING);
            hung.heartbeat(now - 16_000);
            hung.supervision(Supervision.STOPPING_HUNG, 0);

            CliRun run = run("workers", "--state-dir", dir.toString());

            assertEquals(0, run.exit(), run.toString());
            String[] lines = run.out().split("\n");
            assertEquals("SLOT   PID  STATE    HEALTH                             HEARTBEAT       IN-FLIGHT  SUCCEEDED  HELD  FAILED"
                    + "  RETRIED  DEAD  STALE", lines[1]);
            assertTrue(lines[2].matches("   0  1111  DEAD     dead, restarting in 7 s            1\\.\\ds ago     +-        100 .*"),
                    lines[2]);
            assertTrue(lines[3].matches("   1  2222  RUNNING  NOT CONSUMING: fetch loop stalled  1\\.\\ds ago .*"), lines[3]);
            assertTrue(lines[4].matches("   2  3333  RUNNING  hung, stopping                     16\\.\\ds ago LATE .*"), lines[4]);
        }
    }

    /** Found by an outside tester: after the master was SIGKILLed, its STOPPED workers still showed HEALTH consuming. */
    @Test
    void aStoppedWorkerIsNotShownConsuming() {
        try (WorkerSlots slots = WorkerSlots.create(dir.resolve("workers.slots"), 1, ProcessHandle.current().pid(), Instant.now(),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            WorkerSlots.Slot stopped = slots.slot(0);
            stopped.pid(1111);
            stopped.health(CONSUMING);
            stopped.state(WorkerState.STOPPED);
            stopped.heartbeat(System.currentTimeMillis() - 20_000); // past the 15 s timeout: it stopped, and sends none

            CliRun run = run("workers", "--state-dir", dir.toString());

            assertEquals(0, run.exit(), run.toString());
            String[] lines = run.out().split("\n");
            assertTrue(lines[2].matches("   0  1111  STOPPED  - +2\\d\\.\\ds ago .*"), lines[2]);
            assertFalse(lines[2].contains("LATE"), "a stopped worker is not late, and no master replaces it: " + lines[2]);
        }
    }

    @Test
    void stateDirectoryComesFromTheSettingsWhenNoOptionGivesIt() {
        try (WorkerSlots slots = WorkerSlots.create(dir.resolve("workers.slots"), 1, ProcessHandle.current().pid(), Instant.now(),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            CliRun run = CliRun.of(Map.of("BINOMIC_MASTER_STATE_DIR", dir.toString()), (url, queues) -> {
                throw new AssertionError("workers needs no broker");
            }, "workers");
            assertEquals(0, run.exit(), run.toString());
            assertTrue(run.out().startsWith("master pid " + slots.masterPid() + " running"), run.out());
        }
    }

    @Test
    void missingStateIsAFailureThatSaysHowToStartAMaster() {
        CliRun run = run("workers", "--state-dir", dir.resolve("nothing-here").toString());
        assertEquals(1, run.exit());
        assertEquals("binomic workers: no master state in " + dir.resolve("nothing-here")
                + ": start one with 'binomic master --state-dir " + dir.resolve("nothing-here") + "', or pass its --state-dir\n",
                run.err());
    }
}
