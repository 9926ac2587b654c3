package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import io.binomic.it.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code binomic master} as an operator runs it: its own JVM, stopped with SIGTERM while idle. On
 * Redis: the master refuses {@code memory://}, which its worker JVMs could not share.
 */
class MasterProcessTest {
    private static final List<String> JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m");

    @TempDir
    Path dir;

    @Test
    void sigtermDrainsTheWorkersAndTheMasterExitsZero() throws Exception {
        // a heartbeat timeout a starved worker meets: one replaced as hung would not be the one whose stop is checked
        List<String> args = new ArrayList<>(List.of("master", "--broker", RedisServer.shared().url(), "--queues", "q", "--workers", "2",
                "--heartbeat-interval", "200ms", "--heartbeat-timeout", "5s", "--shutdown-grace", "500ms",
                "--kill-grace", "300ms", "--state-dir", dir.toString()));
        JVM_OPTIONS.forEach(option -> args.add("--jvm-option=" + option));
        Path log = dir.resolve("master.log");
        Process master = new ProcessBuilder(JavaCommand.of(BinomicCli.class, JVM_OPTIONS, args))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Path segment = dir.resolve("workers.slots");
            Fixture.await("two running workers", () -> "master log: " + read(log) + Fixture.workerLogs(dir), () -> Files.exists(segment) && runningWorkers(segment).size() == 2);
            List<Long> workers = runningWorkers(segment);

            master.destroy(); // SIGTERM

            assertTrue(master.waitFor(20, TimeUnit.SECONDS), "master exits; log: " + read(log));
            assertEquals(0, master.exitValue(), "exit code; log: " + read(log));
            for (long pid : workers) {
                assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "worker " + pid + " is gone");
            }
            String output = read(log);
            assertTrue(output.contains("master pid " + master.pid() + " runs 2 worker(s)"), output);
            for (int slot = 0; slot < 2; slot++) {
                assertTrue(output.contains("worker " + slot + " (pid " + workers.get(slot) + ") stopped, exit code 0"), output);
            }
            assertTrue(output.contains("master pid " + master.pid() + " stopped"), output);
            try (WorkerSlots slots = WorkerSlots.openReadOnly(segment)) {
                assertTrue(slots.snapshot().stream().allMatch(s -> s.state() == WorkerState.STOPPED), slots.snapshot().toString());
            }
        } finally {
            master.destroyForcibly();
        }
    }

    private static List<Long> runningWorkers(Path segment) {
        try (WorkerSlots slots = WorkerSlots.openReadOnly(segment)) {
            return slots.snapshot().stream().filter(s -> s.state() == WorkerState.RUNNING).map(SlotSnapshot::pid).toList();
        } catch (RuntimeException notYetWritten) {
            return List.of();
        }
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
