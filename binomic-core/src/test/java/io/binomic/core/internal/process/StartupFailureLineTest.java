package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StartupFailureLineTest {
    @TempDir
    Path dir;

    @Test
    void theWorkersOwnLineOfThisIncarnationIsPreferredOverItsStackAndEarlierIncarnations() throws Exception {
        Path log = dir.resolve("worker-0.log");
        Files.writeString(log, """
                ---- master starts worker 0 (incarnation 1)
                binomic worker 0: start-up failed: cannot use the master's segment: gone
                """);
        long offset = Files.size(log);
        Files.writeString(log, """
                ---- master starts worker 0 (incarnation 2)
                INFO worker 0 settings from /tmp/s: {}
                binomic worker 0: start-up failed: io.binomic.api.BrokerException: cannot connect to Redis at localhost:1: refused
                io.binomic.api.BrokerException: cannot connect to Redis at localhost:1: refused
                \tat io.binomic.redis.internal.RedissonSetup.connect(RedissonSetup.java:313)
                Caused by: java.net.ConnectException: refused
                """, StandardOpenOption.APPEND);

        assertEquals(Optional.of("binomic worker 0: start-up failed: io.binomic.api.BrokerException: cannot connect to Redis at localhost:1: refused"),
                StartupFailureLine.read(log, offset));
    }

    @Test
    void aJvmThatCouldNotStartTheWorkerGivesItsLastErrorLine() throws Exception {
        Path log = Files.writeString(dir.resolve("worker-0.log"), """
                ---- master starts worker 0 (incarnation 1)
                Error: Could not find or load main class io.binomic.core.internal.process.WorkerProcessMain
                Caused by: java.lang.ClassNotFoundException: io.binomic.core.internal.process.WorkerProcessMain
                """);

        assertEquals(Optional.of("Caused by: java.lang.ClassNotFoundException: io.binomic.core.internal.process.WorkerProcessMain"),
                StartupFailureLine.read(log, 0));
    }

    /** Found by an outside tester: the master quoted "A fatal exception has occurred", not the option the JVM refused. */
    @Test
    void aJvmThatRefusedAnOptionGivesTheLineThatNamesItNotItsGenericLines() throws Exception {
        Path bogus = Files.writeString(dir.resolve("worker-0.log"), """
                ---- master starts worker 0 (incarnation 1)
                Unrecognized VM option 'Bogus'
                Error: Could not create the Java Virtual Machine.
                Error: A fatal exception has occurred. Program will exit.
                """);
        Path heap = Files.writeString(dir.resolve("worker-1.log"), """
                ---- master starts worker 1 (incarnation 1)
                Invalid maximum heap size: -Xmx1gb
                Error: Could not create the Java Virtual Machine.
                Error: A fatal exception has occurred. Program will exit.
                """);

        assertEquals(Optional.of("Unrecognized VM option 'Bogus'"), StartupFailureLine.read(bogus, 0));
        assertEquals(Optional.of("Invalid maximum heap size: -Xmx1gb"), StartupFailureLine.read(heap, 0));
    }

    @Test
    void theWorkersHintNamesTheSettingNotTheApiField() throws Exception {
        Path log = Files.writeString(dir.resolve("worker-2.log"), """
                ---- master starts worker 2 (incarnation 1)
                binomic worker 2: start-up failed: io.binomic.api.BrokerException: cannot connect to Redis at h:1: refused; check BrokerConfig.url
                """);

        assertEquals(Optional.of("binomic worker 2: start-up failed: io.binomic.api.BrokerException: cannot connect to Redis at h:1:"
                + " refused; check --broker or broker.url (BINOMIC_BROKER_URL)"), StartupFailureLine.read(log, 0));
    }

    @Test
    void nothingWhenThisIncarnationWroteNoErrorOrTheLogIsGone() throws Exception {
        Path log = Files.writeString(dir.resolve("worker-0.log"), "binomic worker 0: start-up failed: old\n---- incarnation 2\n");

        assertEquals(Optional.empty(), StartupFailureLine.read(log, Files.size(log) - "---- incarnation 2\n".length()));
        assertEquals(Optional.empty(), StartupFailureLine.read(dir.resolve("missing.log"), 0));
    }
}
