package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Help, usage errors and exit codes: what a script or a person at the terminal sees. */
class BinomicCliUsageTest {

    private static CliRun run(String... args) {
        return CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("a usage error must not connect to a broker");
        }, args);
    }

    private static void assertUsageError(CliRun run, String firstLine, String usageLine) {
        assertEquals(2, run.exit(), run.toString());
        assertEquals("", run.out(), "errors go to stderr only");
        String[] lines = run.err().split("\n");
        assertEquals(firstLine, lines[0]);
        assertEquals("", lines[1]);
        assertEquals(usageLine, lines[2]);
    }

    @Test
    void helpListsEveryCommandOnStdoutAndExitsZero() {
        CliRun run = run("--help");
        assertEquals(0, run.exit());
        assertEquals("", run.err());
        assertEquals("""
                Usage: binomic <command> [options]

                Commands:
                  master       Start a master that runs and supervises worker JVMs, until SIGTERM or Ctrl-C
                  queues       Show each queue: ready, pending, delayed, dead letters and consumers
                  workers      Show the workers of a master on this machine: pid, state, heartbeat age and counters
                  dlq list     Show dead letters grouped by task, reason and failure class (--details: one per line)
                  dlq replay   Put dead letters back on their queue (attempt reset, replayedFrom header set)
                  dlq purge    Delete dead letters for good

                Run 'binomic <command> --help' for a command's options.
                Exit codes: 0 done, 1 the operation failed, 2 bad usage.
                """, run.out());
    }

    @Test
    void noCommandIsAUsageError() {
        assertUsageError(run(), "binomic: no command given", "Usage: binomic <command> [options]");
    }

    @Test
    void unknownCommandIsAUsageError() {
        assertUsageError(run("frobnicate"), "binomic: unknown command 'frobnicate'", "Usage: binomic <command> [options]");
    }

    @Test
    void everyCommandHasHelp() {
        for (String[] command : new String[][] {{"master"}, {"queues"}, {"workers"}, {"dlq", "list"}, {"dlq", "replay"},
                {"dlq", "purge"}}) {
            String[] args = java.util.Arrays.copyOf(command, command.length + 1);
            args[command.length] = "--help";
            CliRun run = run(args);
            assertEquals(0, run.exit(), String.join(" ", args));
            assertTrue(run.out().startsWith("Usage: binomic " + String.join(" ", command) + " [options]\n"), run.out());
            assertTrue(run.out().contains("  --help "), run.out());
        }
    }

    @Test
    void queuesHelpShowsOptionsWithTheirDefaults() {
        assertEquals("""
                Usage: binomic queues [options]
                Show each queue: ready, pending, delayed, dead letters and consumers.

                Options:
                  --broker URL   broker URL, e.g. redis://user:pass@host:6379/0. Defaults to $BINOMIC_BROKER_URL, else redis://localhost:6379
                  --queues A,B   comma-separated queues. Defaults to the queues of the tasks found on the module path
                  --help         show this help

                READY: waiting to be fetched. PENDING: fetched, not yet acknowledged (running, or
                stranded until reclaim). DELAYED: waiting for their due time (DELAY tasks, retry backoff).
                DEAD: in the dead-letter queue ('binomic dlq list').
                """, run("queues", "--help").out());
    }

    @Test
    void unknownOptionNamesItAndShowsTheCommandUsage() {
        assertUsageError(run("queues", "--workers", "3"), "binomic queues: unknown option --workers",
                "Usage: binomic queues [options]");
    }

    @Test
    void malformedNumberIsAUsageError() {
        assertUsageError(run("master", "--workers", "many"), "binomic master: --workers must be a whole number, was 'many'",
                "Usage: binomic master [options]");
    }

    @Test
    void malformedDurationIsAUsageError() {
        assertUsageError(run("master", "--heartbeat-interval", "5 parsecs"),
                "binomic master: --heartbeat-interval must be a duration such as 500ms, 5s, 2m or PT5S, was '5 parsecs'",
                "Usage: binomic master [options]");
    }

    @Test
    void optionWithoutValueIsAUsageError() {
        assertUsageError(run("master", "--broker"), "binomic master: --broker needs a value (URL)",
                "Usage: binomic master [options]");
    }

    @Test
    void inconsistentMasterSettingsAreAUsageErrorNamingTheField() {
        assertUsageError(run("master", "--broker", "memory://", "--heartbeat-interval", "5s", "--heartbeat-timeout", "6s"),
                "binomic master: heartbeatTimeout must be at least twice heartbeatInterval (PT5S), was PT6S",
                "Usage: binomic master [options]");
    }

    @Test
    void positionalArgumentIsAUsageError() {
        assertUsageError(run("queues", "emails"), "binomic queues: unexpected argument 'emails'", "Usage: binomic queues [options]");
    }

    @Test
    void dlqWithoutSubcommandListsThem() {
        assertUsageError(run("dlq"), "binomic dlq: say which: list, replay, purge", "Usage: binomic dlq <command> [options]");
        CliRun help = run("dlq", "--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().contains("  dlq replay   Put dead letters back"), help.out());
        assertUsageError(run("dlq", "frob"), "binomic dlq: unknown command 'frob'", "Usage: binomic dlq <command> [options]");
    }

    @Test
    void replayWithoutSelectionIsRefused() {
        assertUsageError(run("dlq", "replay", "--queues", "q"),
                "binomic dlq replay: say what to replay: --all, --id ID, or a filter (--task, --reason, --error-class)",
                "Usage: binomic dlq replay [options]");
    }

    @Test
    void purgeWithTwoSelectionsIsRefused() {
        assertUsageError(run("dlq", "purge", "--all", "--task", "send"),
                "binomic dlq purge: --all, --id and the filters exclude each other: choose one way to select",
                "Usage: binomic dlq purge [options]");
    }

    @Test
    void replayByIdNeedsOneQueue() {
        assertUsageError(run("dlq", "replay", "--id", "1-0", "--queues", "a,b"),
                "binomic dlq replay: --id needs exactly one queue: add --queues QUEUE", "Usage: binomic dlq replay [options]");
    }

    @Test
    void unknownReasonListsTheValidOnes() {
        assertUsageError(run("dlq", "list", "--reason", "bored"),
                "binomic dlq list: --reason must be one of [MAX_ATTEMPTS, NON_RETRYABLE, DECODE_ERROR, TASK_NOT_FOUND], was 'bored'",
                "Usage: binomic dlq list [options]");
    }

    @Test
    void repeatedSingleOptionIsAUsageError() {
        assertUsageError(run("master", "--workers", "1", "--workers=2"), "binomic master: --workers is given more than once",
                "Usage: binomic master [options]");
    }

    @Test
    void brokerUrlWithoutSchemeIsAUsageError() {
        assertUsageError(run("queues", "--broker", "localhost"),
                "binomic queues: --broker must start with a scheme such as redis:// or memory://, was 'localhost'",
                "Usage: binomic queues [options]");
    }

    @Test
    void unreachableOrUnknownBrokerIsAFailureNotAUsageError() {
        CliRun run = CliRun.of(Map.of(), BinomicCli::connect, "queues", "--broker", "nosuch://x", "--queues", "q");
        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.err().startsWith("binomic queues: no broker provider for URL scheme 'nosuch'"), run.err());
        assertEquals("", run.out());
    }

    @Test
    void brokerUrlComesFromTheEnvironmentWhenNotGiven() {
        String[] seen = new String[1];
        CliRun.of(Map.of("BINOMIC_BROKER_URL", "redis://cache:6380"), (url, queues) -> {
            seen[0] = url;
            throw new IllegalStateException("stop here");
        }, "queues", "--queues", "q");
        assertEquals("redis://cache:6380", seen[0]);
    }
}
