package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
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
 * {@code binomic workers} during an outage: HEALTH says BROKER UNREACHABLE soon after the worker's first call fails,
 * with a heartbeat interval (5 s) longer than that, since a worker publishes a change of its health at once.
 */
class WorkersHealthOnRedisTest {
    @TempDir
    Path dir;

    @Test
    void brokerUnreachableShowsWithoutWaitingForTheNextHeartbeat() throws Exception {
        Fixture fixture = new Fixture();
        try (RedisServer broker = RedisServer.startNew()) {
            List<String> args = new ArrayList<>(List.of("master", "--broker", broker.url(), "--queues", fixture.queue,
                    "--workers", "1", "--heartbeat-interval", "5s", "--lease-timeout", "10s", "--state-dir", dir.toString()));
            fixture.workerJvmOptions().forEach(option -> args.add("--jvm-option=" + option));
            Path log = dir.resolve("master.log");
            ProcessBuilder builder = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args))
                    .redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().put("BINOMIC_WORKER_POLL_TIMEOUT", "200ms");
            Process master = builder.start();
            try {
                Fixture.await("the worker consuming", () -> workers() + "\nmaster log: " + read(log) + Fixture.workerLogs(dir)
                        + Fixture.threadDumps(master),
                        () -> workers().contains(" consuming "));
                // Past a heartbeat, so that the next one is seconds away when Redis goes.
                Fixture.sleep(1000);
                long stopped = System.nanoTime();
                broker.stop();
                Fixture.await("BROKER UNREACHABLE", () -> workers() + "\nmaster log: " + read(log) + Fixture.workerLogs(dir),
                        () -> workers().contains("BROKER UNREACHABLE"));
                long shownMillis = (System.nanoTime() - stopped) / 1_000_000;
                // The worker's first fetch fails or overruns within the poll timeout plus 1 s, and a change is published
                // within 250 ms; 2 s of slack for a loaded machine, short of the heartbeat interval and of 5 s.
                assertTrue(shownMillis < 200 + 1000 + 250 + 2000, "BROKER UNREACHABLE shown " + shownMillis + " ms after Redis stopped: "
                        + workers());
            } finally {
                master.destroy();
                if (!master.waitFor(30, TimeUnit.SECONDS)) {
                    master.destroyForcibly();
                }
            }
        }
    }

    private String workers() {
        CliRun run = CliRun.of("workers", "--state-dir", dir.toString());
        return run.out() + run.err();
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
