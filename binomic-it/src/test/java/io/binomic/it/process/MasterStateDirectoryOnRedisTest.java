package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.internal.process.Master;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.it.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code binomic master} on a state directory a live master holds. On Redis: the master refuses
 * {@code memory://}, which no other JVM can reach, before it looks at its state directory.
 */
class MasterStateDirectoryOnRedisTest {
    private final RedisServer redis = RedisServer.shared();

    @TempDir
    Path dir;

    @Test
    void secondMasterOnALiveMastersStateDirectoryFailsWithExitOneAndSaysWhose() throws Exception {
        long liveMaster = ProcessHandle.current().parent().orElseThrow().pid();
        Path theirSettings = Files.writeString(dir.resolve("worker.conf"), "broker.url = redis://theirs:6379\n");
        try (WorkerSlots theirs = WorkerSlots.create(dir.resolve("workers.slots"), 1, liveMaster, Instant.now(),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            CliRun run = CliRun.of("master", "--broker", redis.url(), "--queues", "q", "--workers", "1", "--state-dir", dir.toString());

            assertEquals(1, run.exit(), run.toString());
            assertEquals("binomic master: the worker segment " + dir.resolve("workers.slots") + " belongs to master pid "
                    + theirs.masterPid() + ", which is still running; stop it or give this master another state directory\n",
                    run.err());
            assertEquals("", run.out());
            assertEquals("broker.url = redis://theirs:6379\n", Files.readString(theirSettings),
                    "the live master's workers keep reading its own settings");
        }
    }

    /** Found by an outside tester: the refused master logged that it drained its workers, as if it had stopped the live one's. */
    @Test
    void aRefusedSecondMasterLogsNoDrain() throws Exception {
        long liveMaster = ProcessHandle.current().parent().orElseThrow().pid();
        Logger log = Logger.getLogger(Master.class.getName());
        List<String> logged = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) { logged.add(new SimpleFormatter().formatMessage(r)); }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
        log.addHandler(handler);
        try (WorkerSlots theirs = WorkerSlots.create(dir.resolve("workers.slots"), 1, liveMaster, Instant.now(),
                Duration.ofSeconds(5), Duration.ofSeconds(15))) {
            CliRun run = CliRun.of("master", "--broker", redis.url(), "--queues", "q", "--workers", "1", "--state-dir", dir.toString());

            assertEquals(1, run.exit(), run.toString());
            assertTrue(run.err().contains("belongs to master pid " + theirs.masterPid() + ", which is still running"), run.err());
            assertEquals(List.of(), logged.stream().filter(m -> m.contains("drain") || m.contains("stopped")).toList());
        } finally {
            log.removeHandler(handler);
        }
    }
}
