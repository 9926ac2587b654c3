package io.binomic.cli;

import io.binomic.testsupport.RedisProcess;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the packaged {@code binomic-cli.jar} with {@code java -jar}, as a user who does not build
 * the jlink image: the help, a command that talks to Redis, and a master whose worker runs against
 * a real redis-server and drains on SIGTERM. None of them prints SLF4J's "no providers" warning:
 * Redisson's logs go to java.util.logging, as Binomic's own do.
 */
class ExecutableJarTest {
    private static final String NO_PROVIDER = "SLF4J(W)";

    @Test
    void helpRunsFromTheJar(@TempDir Path dir) throws Exception {
        Result help = run(dir, List.of("--help"));
        assertEquals(0, help.exit(), help::toString);
        assertTrue(help.out().contains("master"), help::toString);
        assertFalse(help.err().contains(NO_PROVIDER), help::toString);
    }

    @Test
    void aCommandAndAMasterWithItsWorkerStartWithoutSlf4jWarnings(@TempDir Path dir) throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            Result queues = run(dir, List.of("queues", "--broker", redis.url(), "--queues", "emails"));
            assertEquals(0, queues.exit(), queues::toString);
            assertTrue(queues.out().contains("emails"), queues::toString);
            assertFalse(queues.err().contains(NO_PROVIDER), queues::toString);
            assertFalse(queues.err().contains("INFO"), () -> "a one-shot command prints no INFO line: " + queues);
            Result verbose = run(dir, List.of("-v", "queues", "--broker", redis.url(), "--queues", "emails"));
            assertEquals(0, verbose.exit(), verbose::toString);
            assertTrue(verbose.err().contains("Binomic started"), () -> "-v shows the INFO lines: " + verbose);

            Path state = dir.resolve("state");
            Path out = dir.resolve("master.out");
            Path err = dir.resolve("master.err");
            Process master = new ProcessBuilder(command(List.of("master", "--broker", redis.url(), "--queues", "emails",
                    "--workers", "1", "--state-dir", state.toString())))
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            try {
                Path workerLog = state.resolve("logs").resolve("worker-0.log");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (!read(workerLog).contains("running as consumer")) {
                    assertTrue(master.isAlive(), () -> "the master exited: " + read(out) + read(err));
                    assertTrue(System.nanoTime() < deadline, () -> "the worker did not start: " + read(workerLog) + read(err));
                    Thread.sleep(200);
                }
                master.destroy(); // SIGTERM: the master drains its worker and exits
                assertTrue(master.waitFor(60, TimeUnit.SECONDS), "the master did not stop within 60 s of SIGTERM");
                assertTrue(read(out).contains("master pid"), read(out));
                assertFalse(read(err).contains(NO_PROVIDER), read(err));
                String worker = read(workerLog);
                assertFalse(worker.contains(NO_PROVIDER), worker);
                assertTrue(worker.contains("Redisson"), "Redisson's logs reach java.util.logging in the worker: " + worker);
            } finally {
                master.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private record Result(int exit, String out, String err) { }

    private static Result run(Path dir, List<String> args) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "cli", ".out");
        Path err = Files.createTempFile(dir, "cli", ".err");
        Process process = new ProcessBuilder(command(args)).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("binomic " + args + " did not end within 60 s: " + read(out) + read(err));
        }
        return new Result(process.exitValue(), read(out), read(err));
    }

    private static List<String> command(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-jar");
        command.add(System.getProperty("binomic.cli.jar"));
        command.addAll(args);
        return command;
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(" + e.getMessage() + ")";
        }
    }
}
