package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkersCommandTest {

    @TempDir
    Path dir;

    private CliRun run(String... args) {
        return CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("workers needs no broker");
        }, args);
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
            running.counters(new WorkerCounters(2, 40, 3, 2, 1, 0));
            running.heartbeat(now - 1_000);
            WorkerSlots.Slot late = slots.slot(1);
            late.pid(2222);
            late.state(WorkerState.RUNNING);
            late.heartbeat(now - 20_000);

            CliRun run = run("workers", "--state-dir", dir.toString());

            assertEquals(0, run.exit(), run.toString());
            String[] lines = run.out().split("\n");
            assertEquals("master pid " + us + " running, started 2026-11-30T04:00:00Z, heartbeat every 5000 ms, hung after 15000 ms",
                    lines[0]);
            assertEquals("SLOT   PID  STATE    HEARTBEAT       IN-FLIGHT  SUCCEEDED  FAILED  RETRIED  DEAD", lines[1]);
            assertTrue(lines[2].matches("   0  1111  RUNNING  1\\.\\ds ago     +2         40       3        2     1"), lines[2]);
            assertTrue(lines[3].matches("   1  2222  RUNNING  20\\.\\ds ago LATE +0          0       0        0     0"), lines[3]);
            assertEquals("   2     -  EMPTY    never                   0          0       0        0     0", lines[4]);
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
