package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import io.binomic.it.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code binomic master} in its own JVM on a Redis whose {@code maxmemory-policy} may evict
 * Binomic's keys: it refuses to start (exit 2, the broker's one-line reason, no worker started),
 * instead of starting workers that each refuse and are restarted for ever. Accepting the risk
 * with {@code broker.option.eviction.allowed} starts it; a Redis that cannot be reached at all does
 * not stop it either (its workers retry, as after an outage). A policy changed to an evicting one
 * while the master runs makes a restarted worker refuse; the master restarts it with its back-off
 * (not in a loop), and the first restart after the policy is fixed runs again, the master untouched.
 */
class MasterOnEvictingRedisTest {
    @TempDir
    Path dir;

    private RedisServer redis;

    @AfterEach
    void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void anEvictingPolicyIsRefusedAtMasterStartWithExitTwoAndNoWorkerStarts() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru");
        String line = refusedStart(new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args(redis.url()))));
        assertTrue(line.startsWith("binomic master: Redis at 127.0.0.1:" + redis.port() + " may evict Binomic's keys: "), line);
        assertTrue(line.contains("maxmemory-policy allkeys-lru"), "names the policy: " + line);
        assertTrue(line.contains("queued jobs and their streams"), "names the risk: " + line);
        assertTrue(line.contains("CONFIG SET maxmemory-policy noeviction"), "names the fix: " + line);
        assertTrue(line.contains("broker.option.eviction.allowed = true"), "names the option: " + line);
    }

    /**
     * Starts the master of {@code builder}, which must refuse to start: exit 2, no worker started, one line of its own on
     * stderr, which is returned.
     */
    private String refusedStart(ProcessBuilder builder) throws Exception {
        Path stdout = dir.resolve("master.out");
        Path stderr = dir.resolve("master.err");
        Process master = builder.redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        try {
            assertTrue(master.waitFor(60, TimeUnit.SECONDS), "the master exits by itself; stderr: " + read(stderr));
            assertEquals(2, master.exitValue(), "a settings refusal; stderr: " + read(stderr) + " stdout: " + read(stdout));
            List<String> lines = read(stderr).lines().filter(l -> l.startsWith("binomic master: ")).toList();
            assertEquals(1, lines.size(), read(stderr));
            assertFalse(Files.exists(dir.resolve("state").resolve("workers.slots")), "no worker segment, so no worker started");
            assertFalse(read(stdout).contains("runs 1 worker(s)"), read(stdout));
            return lines.getFirst();
        } finally {
            master.destroyForcibly();
        }
    }

    /** Found by an outside tester: a wrong password started the workers, each refused on every restart, for ever. */
    @Test
    void aPasswordRedisRefusesIsRefusedAtMasterStartWithExitTwoAndNoWorkerStarts() throws Exception {
        redis = RedisServer.startNew("--requirepass", "right");
        ProcessBuilder builder = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args(redis.url())));
        builder.environment().put("BINOMIC_BROKER_PASSWORD", "wrong");
        String line = refusedStart(builder);
        assertTrue(line.startsWith("binomic master: Redis at 127.0.0.1:" + redis.port() + " refused the password for user default"),
                line);
        assertTrue(line.contains("broker.password from environment variable BINOMIC_BROKER_PASSWORD"), "names where it came from: "
                + line);
    }

    /** Found by an outside tester: a rediss:// URL at a plain Redis port started the workers, each failing its start, for ever. */
    @Test
    void aRedissUrlAtAPlainPortIsRefusedAtMasterStartWithExitTwoAndNoWorkerStarts() throws Exception {
        redis = RedisServer.startNew();
        String url = redis.url().replaceFirst("^redis://", "rediss://");
        ProcessBuilder builder = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args(url)));
        builder.environment().put("BINOMIC_BROKER_CONNECT_TIMEOUT", "2s");
        String line = refusedStart(builder);
        assertTrue(line.startsWith("binomic master: Redis at 127.0.0.1:" + redis.port() + " did not answer the TLS handshake"), line);
        assertTrue(line.contains("the port answers plain Redis (no TLS)"), line);
        assertTrue(line.contains("use redis:// or the server's TLS port in --broker"), "names the fix: " + line);
    }

    @Test
    void theOptionThatAcceptsTheRiskStartsTheMasterAndItsWorker() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru");
        Path settings = Files.writeString(dir.resolve("binomic.conf"), "broker.option.eviction.allowed = true\n");
        List<String> args = new ArrayList<>(List.of("--config", settings.toString()));
        args.addAll(args(redis.url()));
        Path log = dir.resolve("master.log");
        Process master = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Fixture.await("the worker running", () -> read(log), () -> workerState() == WorkerState.RUNNING);
            assertTrue(master.isAlive(), read(log));
        } finally {
            master.destroy();
            master.waitFor(30, TimeUnit.SECONDS);
            master.destroyForcibly();
        }
    }

    @Test
    void aWorkerRefusedAfterThePolicyChangedIsRestartedWithTheBackoffAndRunsOnceItIsFixed() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "20mb", "--maxmemory-policy", "noeviction");
        List<String> args = args(redis.url());
        args.addAll(List.of("--restart-backoff", "500ms", "--restart-backoff-max", "2s"));
        Path log = dir.resolve("master.log");
        Process master = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Fixture.await("the worker running", () -> read(log), () -> workerState() == WorkerState.RUNNING);
            redis.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
            Fixture.signal(workerPid(), "KILL");

            Fixture.await("a replacement refused twice", () -> read(log), () -> restartWaits(log) >= 2);
            assertTrue(read(log).contains("exited with code 3 during start-up"), read(log));
            assertTrue(read(log).contains("may evict Binomic's keys"), "the master's line quotes the reason: " + read(log));
            long spawnsBefore = spawns();
            Thread.sleep(3000);
            // 500 ms, 1 s, 2 s, 2 s...: at most 3 more starts in 3 s, where a loop would start one a second or more.
            assertTrue(spawns() - spawnsBefore <= 3, "restarts keep to the back-off: " + read(log));

            redis.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
            Fixture.await("a worker running again", () -> read(log), () -> workerState() == WorkerState.RUNNING);
            assertTrue(master.isAlive(), read(log));
        } finally {
            master.destroy();
            master.waitFor(30, TimeUnit.SECONDS);
            master.destroyForcibly();
        }
    }

    private long restartWaits(Path log) {
        return read(log).lines().filter(l -> l.contains("restarting in")).count();
    }

    private long spawns() {
        return read(dir.resolve("state").resolve("logs").resolve("worker-0.log")).lines().filter(l -> l.startsWith("---- ")).count();
    }

    private long workerPid() {
        try (WorkerSlots slots = WorkerSlots.openReadOnly(dir.resolve("state").resolve("workers.slots"))) {
            return slots.snapshot().getFirst().pid();
        }
    }

    @Test
    void aRedisThatCannotBeReachedDoesNotStopTheMasterItsWorkersRetry() throws Exception {
        int nothing;
        try (ServerSocket probe = new ServerSocket(0)) {
            nothing = probe.getLocalPort();
        }
        Path log = dir.resolve("master.log");
        Process master = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"),
                args("redis://127.0.0.1:" + nothing))).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Fixture.await("the master running its worker", () -> read(log), () -> read(log).contains("runs 1 worker(s)"));
            assertTrue(read(log).contains("cannot check the settings of the broker at redis://127.0.0.1:" + nothing), read(log));
            Fixture.await("a worker started", () -> read(log), () -> Files.exists(dir.resolve("state").resolve("logs").resolve("worker-0.log")));
            assertTrue(master.isAlive(), read(log));
        } finally {
            master.destroy();
            master.waitFor(30, TimeUnit.SECONDS);
            master.destroyForcibly();
        }
    }

    private List<String> args(String url) {
        return new ArrayList<>(List.of("master", "--broker", url, "--queues", "evicting", "--workers", "1",
                "--heartbeat-interval", "200ms", "--shutdown-grace", "1s", "--kill-grace", "1s",
                "--state-dir", dir.resolve("state").toString(), "--jvm-option=-Xmx128m", "--jvm-option=-XX:TieredStopAtLevel=1"));
    }

    private WorkerState workerState() {
        Path segment = dir.resolve("state").resolve("workers.slots");
        if (!Files.exists(segment)) {
            return WorkerState.STOPPED;
        }
        try (WorkerSlots slots = WorkerSlots.openReadOnly(segment)) {
            return slots.snapshot().getFirst().state();
        } catch (RuntimeException e) {
            return WorkerState.STOPPED;
        }
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
