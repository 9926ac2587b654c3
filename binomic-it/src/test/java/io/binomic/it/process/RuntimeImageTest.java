package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.Binomic;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jlink runtime as users build it with {@code build-runtime.sh}, from the
 * jars this build just made (target/runtime-jars, copied by the pom before the tests), then used:
 * {@code bin/binomic --help}, and a master from the image whose worker JVM (the image's java, the
 * image's module path plus an application jar) runs tasks against Redis.
 *
 * <p>The build trains the worker's AOT cache ({@code lib/binomic-worker.aot}) for the
 * image's module path; {@code bin/binomic-train-aot} retrains it for the module path with the
 * application jar (about 5 s, on the memory broker), and the master's worker then opens it (its
 * {@code -Xlog:aot} output, in the worker log, says so; no {@code [error]} line from a rejected cache).
 */
class RuntimeImageTest {
    private static final Path SCRIPT = Path.of("scripts", "build-runtime.sh");
    private static final Path JARS = Path.of("target", "runtime-jars");
    private static final int JOBS = 5;

    @TempDir
    Path dir;

    @Test
    void imageBuiltFromThisBuildsJarsRunsTheCliAndAWorkerThatRunsTasksOnRedis() throws Exception {
        assertTrue(Files.isDirectory(JARS), JARS.toAbsolutePath() + " is missing: run the tests through ./mvnw verify from the root");
        Path image = dir.resolve("image");
        Path buildLog = dir.resolve("build.log");
        Process build = new ProcessBuilder("bash", SCRIPT.toString(), "--jars", JARS.toString(), image.toString())
                .redirectErrorStream(true).redirectOutput(buildLog.toFile()).start();
        assertTrue(build.waitFor(10, TimeUnit.MINUTES), "build-runtime.sh finished; " + read(buildLog));
        assertEquals(0, build.exitValue(), read(buildLog));
        Path binomic = image.resolve("bin").resolve("binomic");
        Path cache = image.resolve("lib").resolve("binomic-worker.aot");
        assertTrue(Files.isRegularFile(cache) && Files.size(cache) > 0, "no trained AOT cache; " + read(buildLog));
        assertEquals(image.resolve("app").toRealPath(), Path.of(read(image.resolve("lib").resolve("binomic-worker.aot.modulepath")).strip())
                .toRealPath(), read(buildLog));
        Path tasksJar = tasksJar();
        Path trainLog = dir.resolve("train.log");
        ProcessBuilder trainBuilder = new ProcessBuilder(image.resolve("bin").resolve("binomic-train-aot").toString())
                .redirectErrorStream(true).redirectOutput(trainLog.toFile());
        trainBuilder.environment().put("BINOMIC_MODULE_PATH", tasksJar.toString());
        trainBuilder.environment().put("BINOMIC_AOT_TRAINING_SECONDS", "1");
        trainBuilder.environment().remove("BINOMIC_CONFIG");
        Process train = trainBuilder.start();
        assertTrue(train.waitFor(3, TimeUnit.MINUTES), "binomic-train-aot finished; " + read(trainLog));
        assertEquals(0, train.exitValue(), read(trainLog));
        assertTrue(read(image.resolve("lib").resolve("binomic-worker.aot.modulepath")).contains(tasksJar.toString()), read(trainLog));

        Path helpLog = dir.resolve("help.txt");
        Process help = new ProcessBuilder(binomic.toString(), "--help").redirectErrorStream(true).redirectOutput(helpLog.toFile()).start();
        assertTrue(help.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, help.exitValue(), read(helpLog));
        assertTrue(read(helpLog).contains("\n  master "), read(helpLog));

        Fixture fixture = new Fixture();
        Path config = Files.writeString(dir.resolve("binomic.conf"), "broker.url = " + fixture.redis.url() + "\nworker.queues = "
                + fixture.queue + "\nworker.concurrency = 2\n");
        Path state = dir.resolve("state");
        List<String> command = new ArrayList<>(List.of(binomic.toString(), "master", "--config", config.toString(), "--workers", "1",
                "--state-dir", state.toString(), "--heartbeat-interval", "500ms", "--shutdown-grace", "2s"));
        fixture.workerJvmOptions().forEach(option -> command.add("--jvm-option=" + option));
        command.add("--jvm-option=-Xlog:aot"); // the JVM's own word that it opened the cache
        ProcessBuilder masterBuilder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("master.log").toFile());
        masterBuilder.environment().put("BINOMIC_MODULE_PATH", tasksJar.toString());
        masterBuilder.environment().remove("BINOMIC_CONFIG");
        Process master = masterBuilder.start();
        try (Binomic client = fixture.client()) {
            fixture.submit(client, JOBS, 10);
            Fixture.await(JOBS + " jobs run by the image's worker", () -> "done " + fixture.ledger.doneJobs() + "; master log: "
                    + read(dir.resolve("master.log")) + "; worker log: " + read(state.resolve("logs").resolve("worker-0.log")),
                    () -> fixture.ledger.doneJobs().size() == JOBS);
            String workerLog = read(state.resolve("logs").resolve("worker-0.log"));
            assertTrue(workerLog.contains("worker 0 settings from"), workerLog);
            assertTrue(workerLog.contains("Opened AOT cache " + cache.toRealPath()) || workerLog.contains("Opened AOT cache " + cache),
                    workerLog);
            assertFalse(workerLog.contains("[error"), workerLog);
            // the image's SLF4J provider (slf4j-jdk14): Redisson's logs reach java.util.logging, and slf4j-api warns of nothing
            assertFalse(workerLog.contains("SLF4J(W)"), workerLog);
            assertTrue(workerLog.contains("Redisson"), workerLog);

            master.destroy(); // SIGTERM: drain, exit 0
            assertTrue(master.waitFor(30, TimeUnit.SECONDS), read(dir.resolve("master.log")));
            assertEquals(0, master.exitValue(), read(dir.resolve("master.log")));
            assertFalse(read(dir.resolve("master.log")).contains("SLF4J(W)"), read(dir.resolve("master.log")));
        } finally {
            master.destroyForcibly();
        }
    }

    /**
     * The application's side: the process tests' task and its TaskProvider, as a jar the image's
     * launcher puts on the module path (an automatic module) through BINOMIC_MODULE_PATH.
     */
    private Path tasksJar() throws IOException {
        Path classes = Path.of("target", "test-classes");
        Path jar = dir.resolve("process-jobs.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String name = classes.relativize(file).toString().replace('\\', '/');
                if (name.startsWith("io/binomic/it/process/ProcessJobs") || name.startsWith("io/binomic/it/process/Ledger")
                        || name.equals("META-INF/services/io.binomic.api.spi.TaskProvider")) {
                    out.putNextEntry(new JarEntry(name));
                    Files.copy(file, out);
                    out.closeEntry();
                }
            }
        }
        return jar;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
