package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real worker JVM reporting through the shared segment, with this test JVM as its master. */
class WorkerProcessTest {
    private static final Duration HEARTBEAT = Duration.ofMillis(100);

    @TempDir
    Path dir;

    private Process startWorker(Path segment, String brokerUrl) throws IOException {
        Path settings = dir.resolve("worker.conf");
        Settings.write(settings, BrokerConfig.builder().url(brokerUrl).build(), TaskDefaults.defaults(),
                WorkerConfig.builder().queues("q").concurrency(2).shutdownGrace(Duration.ofSeconds(1)).build());
        WorkerLaunch launch = new WorkerLaunch(1, segment, HEARTBEAT, settings);
        ProcessBuilder builder = new ProcessBuilder(JavaCommand.of(WorkerProcessMain.class, TestJvm.OPTIONS, launch.toArgs()))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("worker.log").toFile());
        return builder.start();
    }

    @Test
    void workerJvmPublishesPidStateAndHeartbeatsAndObeysDrain() throws Exception {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots slots = WorkerSlots.create(file, 2, ProcessHandle.current().pid(), Instant.now(), HEARTBEAT,
                Duration.ofSeconds(1))) {
            WorkerSlots.Slot slot = slots.slot(1);
            Process worker = startWorker(file, "memory://");
            try {
                Await.until(Duration.ofSeconds(30), () -> "RUNNING in " + slot.snapshot() + "; log: " + log(),
                        () -> slot.state() == WorkerState.RUNNING);
                assertEquals(worker.pid(), slot.pid());
                long first = slot.heartbeatMillis();
                Await.until(Duration.ofSeconds(5), "a newer heartbeat", () -> slot.heartbeatMillis() > first);
                assertTrue(System.currentTimeMillis() - slot.heartbeatMillis() < 2_000, "heartbeat is fresh");
                assertEquals(WorkerState.EMPTY, slots.slot(0).state(), "the worker writes only its own slot");

                slot.command(WorkerCommand.DRAIN);
                assertTrue(worker.waitFor(15, TimeUnit.SECONDS), "worker exits after drain");
                assertEquals(0, worker.exitValue(), "exit code after drain; log: " + log());
                assertEquals(WorkerState.STOPPED, slot.state());
            } finally {
                worker.destroyForcibly();
            }
        }
    }

    @Test
    void workerWhoseStartUpFailsExitsWithCodeThreeAndSaysWhy() throws Exception {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots slots = WorkerSlots.create(file, 2, ProcessHandle.current().pid(), Instant.now(), HEARTBEAT,
                Duration.ofSeconds(1))) {
            Process worker = startWorker(file, "nosuch://nowhere");
            try {
                assertTrue(worker.waitFor(30, TimeUnit.SECONDS), "worker exits");
                assertEquals(3, worker.exitValue());
                String log = log();
                assertTrue(log.contains("binomic worker 1: start-up failed") && log.contains("nosuch"), log);
                assertEquals(WorkerState.STOPPED, slots.slot(1).state());
            } finally {
                worker.destroyForcibly();
            }
        }
    }

    @Test
    void launchArgumentsRoundTrip() {
        WorkerLaunch launch = new WorkerLaunch(3, Path.of("/tmp/x.slots"), Duration.ofMillis(250), Path.of("/tmp/worker.conf"));
        assertEquals(launch, WorkerLaunch.parse(launch.toArgs()));
    }

    @Test
    void launchArgumentsNameTheBadOption() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> WorkerLaunch.parse(List.of("--slot", "x", "--segment", "/s")));
        assertEquals("--slot must be a whole number, was 'x'", e.getMessage());
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("worker.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
