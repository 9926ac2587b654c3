package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MasterCommandTest {

    @TempDir
    Path dir;

    /** Found by an outside tester: {@code --queues cpuu} started workers on a queue no task used, silently. */
    @Test
    void aQueueNoTaskUsesIsWarnedOfWithTheClosestTaskQueue() {
        assertEquals(List.of("no task on the module path uses queue 'cpuu'; did you mean 'cpu'? (the tasks' queues: cpu, io)"),
                MasterCommand.queuesNoTaskUses(List.of("cpuu", "io"), List.of("cpu", "io")));
        assertEquals(List.of(), MasterCommand.queuesNoTaskUses(List.of("cpu", "io"), List.of("cpu", "io")));
        // found by an outside tester: a task module without its 'provides' clause, and every job dead-lettered without a word
        List<String> noTask = MasterCommand.queuesNoTaskUses(List.of("alpha", "beta"), List.of());
        assertEquals(1, noTask.size(), noTask.toString());
        assertTrue(noTask.getFirst().startsWith("no task on the module path (no TaskProvider service): the workers can run no job,"
                + " and dead-letter each one they read from alpha, beta as TASK_NOT_FOUND;"), noTask.getFirst());
        assertTrue(noTask.getFirst().contains("'provides io.binomic.api.spi.TaskProvider with ...'"), noTask.getFirst());
    }

    /** Found by an outside tester: each worker JVM got a private in-memory broker that nothing could reach. */
    @Test
    void aMemoryBrokerIsRefusedWithExitTwoBeforeAnyWorkerStarts() {
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("the master needs no broker connection");
        }, "master", "--broker", "memory://", "--queues", "mail", "--workers", "1", "--state-dir", dir.toString());

        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic master: memory:// is a broker inside one JVM: each worker JVM would get its own, which no producer,"
                + " CLI command or other worker can reach; give the workers a shared broker such as --broker redis://localhost:6379"
                + " (or --private-memory-broker to mean it)", run.err().lines().findFirst().orElse(""));
        assertFalse(Files.exists(dir.resolve("worker.conf")), "no worker was set up");

        CliRun fromEnv = CliRun.of(Map.of("BINOMIC_BROKER_URL", "memory://"), (url, queues) -> {
            throw new AssertionError("the master needs no broker connection");
        }, "master", "--queues", "mail", "--workers", "1", "--state-dir", dir.toString());
        assertEquals(2, fromEnv.exit(), fromEnv.toString());
        assertTrue(fromEnv.err().endsWith("(broker.url from environment variable BINOMIC_BROKER_URL)\n"), fromEnv.err());
        assertEquals(1, fromEnv.err().lines().count(), "a setting, not the command line: no usage; " + fromEnv.err());
    }

    /** Found by an outside tester: each worker JVM failed on the option, and the master quoted the JVM's generic line. */
    @Test
    void aJvmOptionNoJvmTakesIsRefusedWithExitTwoNamingItBeforeAnyWorkerStarts() {
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("the master needs no broker connection");
        }, "master", "--broker", "memory://", "--queues", "mail", "--workers", "1", "--state-dir", dir.toString(),
                "--jvm-option=-XX:+Bogus");

        assertEquals(2, run.exit(), run.toString());
        String first = run.err().lines().findFirst().orElse("");
        assertTrue(first.startsWith("binomic master: a worker JVM does not start with the options "), first);
        assertTrue(first.endsWith(": Unrecognized VM option 'Bogus'; fix or remove the option (--jvm-option)"), first);
        assertFalse(Files.exists(dir.resolve("worker.conf")), "no worker was set up");
    }

    /** Found by an outside tester: with no queue, each worker exited at start and was restarted forever. */
    @Test
    void aMasterWhoseWorkersWouldHaveNoQueueIsRefusedWithExitTwo() {
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("the master needs no broker connection");
        }, "master", "--broker", "memory://", "--workers", "1", "--state-dir", dir.toString());

        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic master: the workers would have no queue to read: no task on the module path (no TaskProvider"
                + " service) and no --queues or worker.queues; put the application's modules on the module path, or name the"
                + " queues with --queues", run.err().lines().findFirst().orElse(""));
        assertFalse(Files.exists(dir.resolve("worker.conf")), "no worker was set up");
    }

    /**
     * A broker URL that no broker on the module path serves was accepted: the master started and
     * its workers failed to start over and over, the reason only in their log files.
     */
    @Test
    void aBrokerUrlNoProviderServesIsRefusedWithExitTwoBeforeAnyWorkerStarts() {
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("the master needs no broker connection");
        }, "master", "--broker", "foo://x", "--queues", "q", "--workers", "1", "--state-dir", dir.toString());

        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().startsWith("binomic master: no broker provider for URL scheme 'foo': use memory://, redis:// or rediss://"),
                run.err());
        assertTrue(run.err().contains("(found: memory"), "the providers found are listed: " + run.err());
        assertTrue(run.err().contains("rediss:// in --broker, or add the module"), "the flag to correct is named: " + run.err());
        assertFalse(Files.exists(dir.resolve("worker.conf")), "no worker was set up");
    }
}
