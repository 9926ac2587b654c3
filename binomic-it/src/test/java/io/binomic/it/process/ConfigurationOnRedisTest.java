package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.core.Binomic;
import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.Master;
import io.binomic.core.internal.process.MasterConfig;
import io.binomic.core.internal.process.Settings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One configuration file (with environment overrides) reaches the master's worker JVMs and the
 * CLI whole: a key prefix, a Redisson file, task defaults, dead-letter retention and the payload
 * limit, not only the broker URL (with the prefix lost the workers would read the wrong keys and
 * run nothing).
 */
class ConfigurationOnRedisTest {
    private static final int JOBS = 12;

    @TempDir
    Path dir;

    /**
     * The file points the broker at a closed port and names a Redisson YAML file that points at
     * the real server: the worker can only connect if the Redisson file reached it.
     */
    private Path configFile(Fixture fixture, String prefix) throws IOException {
        Path yaml = Files.writeString(dir.resolve("redisson.yaml"),
                "singleServerConfig:\n  address: \"" + fixture.redis.url() + "\"\n");
        return Files.writeString(dir.resolve("binomic.conf"), """
                # what an operator writes once for the master, its workers and the CLI
                broker.url = redis://127.0.0.1:1
                broker.keyPrefix = %s
                broker.option.redisson.config = %s
                broker.maxPayloadBytes = 65536
                broker.deadLetterMaxCount = 500
                broker.deadLetterMaxAge = 3d
                task.maxAttempts = 2
                task.timeout = 45s
                worker.queues = %s
                worker.concurrency = 3
                master.workers = 1
                """.formatted(prefix, yaml, fixture.queue));
    }

    private static Binomic client(Settings settings, Fixture fixture) {
        BinomicConfig config = BinomicConfig.builder().broker(settings.broker("unused://")).schedulePeriodicTasks(false).build();
        return Binomic.builder().config(config).task(ProcessJobs.job(fixture.queue)).build().start(); // declares; runs nothing
    }

    @Test
    void masterWorkersRunTasksSubmittedWithTheFilesKeyPrefixAndReportEverySettingTheyGot() throws Exception {
        Fixture fixture = new Fixture();
        String prefix = "cfg" + System.nanoTime();
        // The environment overrides the file: the workers must see 4 attempts, not 2.
        Settings settings = Settings.load(Optional.of(configFile(fixture, prefix)), Map.of("BINOMIC_TASK_MAX_ATTEMPTS", "4"));
        // Each setting once: the ones this test sets itself are left out of the file's.
        MasterConfig config = settings.master("unused://", Set.of("master.heartbeatInterval", "master.heartbeatTimeout",
                        "master.startTimeout", "worker.shutdownGrace", "master.killGrace", "master.stateDir", "master.jvmOptions"))
                .heartbeatInterval(Duration.ofMillis(200))
                .heartbeatTimeout(Duration.ofSeconds(3))
                .startTimeout(Duration.ofSeconds(30))
                .shutdownGrace(Duration.ofSeconds(2))
                .killGrace(Duration.ofMillis(300))
                .stateDirectory(dir.resolve("state"))
                .jvmOptions(fixture.workerJvmOptions())
                .build();

        try (Binomic client = client(settings, fixture)) {
            fixture.submit(client, JOBS, 10);
            try (Master master = new Master(config).start()) {
                Fixture.await("every job done by the master's worker", () -> "done " + fixture.ledger.doneJobs()
                        + "; worker log: " + log(config), () -> fixture.ledger.doneJobs().size() == JOBS);
                assertEquals(1, master.slots().slotCount());
            }
            assertEquals(IntStream.range(0, JOBS).boxed().collect(Collectors.toSet()), Set.copyOf(fixture.ledger.doneJobs()));
        }
        assertEquals(List.of(), fixture.redis.call("KEYS", "binomic:*" + fixture.queue + "*"),
                "nothing under the default prefix");
        assertEquals(1L, fixture.redis.call("EXISTS", prefix + ":{" + fixture.queue + "}:stream"));

        String log = log(config);
        for (String setting : List.of("keyPrefix=" + prefix, "options={redisson.config=" + dir.resolve("redisson.yaml") + "}",
                "maxPayloadBytes=65536", "deadLetterMaxCount=500", "deadLetterMaxAge=PT72H", "maxAttempts=4", "taskTimeout=PT45S",
                "queues=[" + fixture.queue + "]", "concurrency=3")) {
            assertTrue(log.contains(setting), "the worker reports " + setting + "; its log:\n" + log);
        }
    }

    @Test
    void cliReadsTheSameFileAndSeesTheQueueUnderItsKeyPrefix() throws Exception {
        Fixture fixture = new Fixture();
        Path file = configFile(fixture, "cli" + System.nanoTime());
        try (Binomic client = client(Settings.load(Optional.of(file), Map.of()), fixture)) {
            fixture.submit(client, 3, 10);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // No --broker, no --queues: the URL, the Redisson file, the key prefix and the queue all come from the file.
        int exit = BinomicCli.run(new String[] {"queues", "--config", file.toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, exit, printed + err.toString(StandardCharsets.UTF_8));
        assertTrue(printed.lines().anyMatch(line -> line.matches(fixture.queue + " +3 +0 +0 +0 +0 +\\d+ +- +-")), printed);
    }

    private static String log(MasterConfig config) {
        try {
            return Files.readString(config.logFile(0));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
