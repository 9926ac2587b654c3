package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerException;
import io.binomic.core.internal.process.Settings;
import io.binomic.core.internal.process.WorkerSlots;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Help, usage errors and exit codes: what a script or a person at the terminal sees. */
class BinomicCliUsageTest {

    private static CliRun run(String... args) {
        return CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("a usage error must not connect to a broker");
        }, args);
    }

    /** The error, then one line that says where the help is: the usage would bury the error. */
    private static void assertUsageError(CliRun run, String firstLine, String hintLine) {
        assertEquals(2, run.exit(), run.toString());
        assertEquals("", run.out(), "errors go to stderr only");
        assertEquals(firstLine + "\n" + hintLine + "\n", run.err());
    }

    @Test
    void outboxSaysHowToAddTheJdbcModuleWhenItIsNotOnThePath() {
        CliRun run = run("outbox", "--jdbc", "jdbc:postgresql://127.0.0.1:1/app");
        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.err().contains("binomic outbox needs the binomic-jdbc module, which is not on this command's path"), run.err());
        assertEquals(2, run("outbox").exit(), "--jdbc is required");
    }

    @Test
    void outboxRefusesAPasswordVariableThatIsNotSet() {
        CliRun run = run("outbox", "--jdbc", "jdbc:postgresql://127.0.0.1:1/app", "--password-env", "BINOMIC_TEST_UNSET_PASSWORD");
        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().contains("the environment variable BINOMIC_TEST_UNSET_PASSWORD is not set"), run.err());
    }

    @Test
    void helpListsEveryCommandOnStdoutAndExitsZero() {
        CliRun run = run("--help");
        assertEquals(0, run.exit());
        assertEquals("", run.err());
        assertEquals("""
                Usage: binomic <command> [options]

                Commands:
                  master             Start a master that runs and supervises worker JVMs, until SIGTERM or Ctrl-C
                  queues             Show each queue: ready, pending, delayed, parked, dead letters, consumers, pause and limits
                  dashboard          Serve the dashboard and /metrics of the queues, until SIGTERM or Ctrl-C
                  workers            Show the workers of a master on this machine: pid, state, health, heartbeat age and counters
                  dlq list           Show dead letters grouped by task, reason and failure class (--details: one per line)
                  dlq replay         Put dead letters back on their queue (attempt reset, replayedFrom header set)
                  dlq purge          Delete dead letters for good
                  job show           Show a job's status, attempts, result or error
                  job cancel         Cancel a job: a queued one never runs, a running one is interrupted
                  job submit         Submit a job by task name with a JSON argument
                  batch show         Show a batch's counts, state and the callbacks enqueued
                  batch cancel       Cancel a batch: its queued jobs never run, its running ones are interrupted
                  workflow show      Show a workflow's state and each job's state and dependencies
                  workflow cancel    Cancel a workflow: its held and queued jobs never run, its running ones are interrupted
                  queue pause        Pause a queue, or one task of it: no worker starts its jobs; running ones finish
                  queue resume       Resume a paused queue, or task: its waiting and parked jobs run again
                  queue limit        Set, remove or show the rate and concurrency limits of a whole queue, for every worker
                  queue partitions   Split a queue into partitions spread over the Redis Cluster's masters, or show them
                  outbox             Show the transactional outbox's rows waiting for the relay and the oldest age (needs binomic-jdbc)

                Global option: --config FILE, a settings file (default $BINOMIC_CONFIG); BINOMIC_* environment
                variables override it, and a command's options override both. --verbose (-v): INFO lines on stderr too.
                Run 'binomic <command> --help' for a command's options.
                Exit codes: 0 done, 1 the operation failed, 2 bad usage or a refused setting.
                """, run.out());
    }

    @Test
    void aQueueLimitWithAMalformedRateOrContradictoryOptionsSaysWhatToType() {
        assertEquals(2, run("queue", "limit", "mail", "--rate", "fifty").exit());
        assertTrue(run("queue", "limit", "mail", "--rate", "fifty").err().startsWith("binomic queue limit: --rate must be N/PERIOD such as 50/s"));
        assertTrue(run("queue", "limit", "mail", "--rate", "50/fortnight").err().contains("--rate's period"));
        assertTrue(run("queue", "limit", "mail", "--none", "--concurrency", "2").err().startsWith("binomic queue limit: --none removes the limits"));
        assertTrue(run("queue", "limit", "mail", "--burst", "5").err().startsWith("binomic queue limit: --burst goes with --rate"));
        assertTrue(run("queue", "limit", "mail", "--concurrency", "0").err().startsWith("binomic queue limit: --concurrency must be at least 1"));
        assertTrue(run("queue", "limit", "mail", "--rate", "5000000/s").err().contains("--rate's count is too large: at most 1000000 per s"));
        assertUsageError(run("queue", "limit", "mail", "--burst", "5"), "binomic queue limit: --burst goes with --rate:"
                + " binomic queue limit NAME --rate 50/s --burst 10", "Run 'binomic queue limit --help' for its options.");
    }

    /** Found by an outside tester: the library's refusals of a flag's value named its Java API, not the flag. */
    @Test
    void aValueTheLibraryRefusesIsNamedByItsFlag() {
        assertUsageError(run("queue", "limit", "mail", "--rate", "50/s", "--burst", "100"),
                "binomic queue limit: --burst must be between 1 and the permits (50), was 100", "Run 'binomic queue limit --help' for its options.");
        assertTrue(run("queue", "limit", "mail", "--rate", "50/0s").err()
                .startsWith("binomic queue limit: --rate's period must be positive, was '0s'; give one such as 1s\n"), "as -1s is");
        assertUsageError(run("queue", "limit", "mail", "--concurrency", "99999999999"),
                "binomic queue limit: --concurrency is too large: at most 2147483647, was 99999999999",
                "Run 'binomic queue limit --help' for its options.");
        assertTrue(run("queue", "limit", "mail", "--concurrency", "9x").err().contains("--concurrency must be a whole number, was '9x'"));
        assertTrue(run("queue", "limit", "mail", "--rate", "50/-1s").err()
                .startsWith("binomic queue limit: --rate's period must be positive, was '-1s'; give one such as 1s\n"), "a negative duration");
    }

    /** Found by an outside tester: --rate's count was refused in the library's words, or as not a whole number when too large. */
    @Test
    void aRateCountOrBurstOutOfBoundsSaysTheBoundThatApplies() {
        assertUsageError(run("queue", "limit", "mail", "--rate", "0/s"),
                "binomic queue limit: --rate's count must be at least 1, was 0; give starts per period such as 50/s",
                "Run 'binomic queue limit --help' for its options.");
        assertTrue(run("queue", "limit", "mail", "--rate", "-5/s").err()
                .startsWith("binomic queue limit: --rate's count must be at least 1, was -5;"), "negative as zero");
        assertUsageError(run("queue", "limit", "mail", "--rate", "99999999999/s"),
                "binomic queue limit: --rate's count is too large: at most 1000000 per s (one start per microsecond), was 99999999999;"
                        + " give a longer period for more", "Run 'binomic queue limit --help' for its options.");
        assertUsageError(run("queue", "limit", "mail", "--rate", "5/s", "--burst", "99999999999"),
                "binomic queue limit: --burst must be between 1 and the permits (5), was 99999999999",
                "Run 'binomic queue limit --help' for its options.");
    }

    @Test
    void aLibraryRefusalInFlagTermsNamesTheFlagAndCliDurations() {
        assertEquals("--unique-ttl must be at least 1 ms, was 0s: give how long the key may be held at most, such as 1h",
                Arguments.inFlagTerms("--unique-ttl", "Uniqueness.whileQueuedOrRunning(ttl) must be at least 1 ms, was PT0S: give how"
                        + " long the key may be held at most, such as Duration.ofHours(1)"));
        assertEquals("--delay must be at least 1 ms, was -5m; leave the option out to keep the task's delay (a DIRECT task has none)",
                Arguments.inFlagTerms("--delay", "delay must be at least 1 ms, was PT-5M; leave the setting out to keep the task's delay"
                        + " (a DIRECT task has none)"));
        assertEquals("--rate: rate limit permits must be >= 1, was 0",
                Arguments.inFlagTerms("--rate", "rate limit permits must be >= 1, was 0"), "another setting's subject stays");
        assertEquals("1500ms 2d 90s P", Arguments.cliDuration("PT1.5S") + " " + Arguments.cliDuration("P2D") + " "
                + Arguments.cliDuration("PT1M30S") + " " + Arguments.cliDuration("P"));
    }

    @Test
    void aPartitionCountOutOfRangeSaysWhatToType() {
        CliRun zero = run("queue", "partitions", "mail", "0");
        assertEquals(2, zero.exit(), zero.toString());
        assertTrue(zero.err().startsWith("binomic queue partitions: the count (the word after the queue) must be at least 1, was 0"),
                "named as it was given: " + zero);
        CliRun zeroFlag = run("queue", "partitions", "mail", "--count", "0");
        assertTrue(zeroFlag.err().startsWith("binomic queue partitions: --count must be at least 1, was 0"), zeroFlag.toString());
        CliRun many = run("queue", "partitions", "mail", "--count", "65");
        assertEquals(2, many.exit(), many.toString());
        assertTrue(many.err().startsWith("binomic queue partitions: --count must be at most 64, was 65"), many.toString());
        CliRun word = run("queue", "partitions", "mail", "three");
        assertEquals(2, word.exit(), word.toString());
        assertTrue(word.err().startsWith("binomic queue partitions: the count (the word after the queue) must be a whole number,"
                + " was 'three'"), word.toString());
    }

    @Test
    void aBadQueueNameForTheQueueCommandsIsBadUsage() {
        for (String verb : new String[] {"pause", "resume", "limit", "partitions"}) {
            CliRun run = run("queue", verb, "bad/name");
            assertEquals(2, run.exit(), run.toString());
            assertTrue(run.err().startsWith("binomic queue " + verb + ": 'bad/name' is not a queue name"), run.toString());
        }
    }

    @Test
    void noCommandIsAUsageError() {
        CliRun run = run();
        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().startsWith("binomic: no command given\n\nUsage: binomic <command> [options]\n"), run.err());
    }

    @Test
    void unknownCommandIsAUsageError() {
        assertUsageError(run("frobnicate"), "binomic: unknown command 'frobnicate'", "Run 'binomic --help' for the commands.");
    }

    @Test
    void aMistypedCommandGetsTheClosestOneSuggested() {
        assertUsageError(run("queus"), "binomic: unknown command 'queus'; did you mean 'queues'?", "Run 'binomic --help' for the commands.");
        assertUsageError(run("dlq", "lst"), "binomic dlq: unknown command 'lst'; did you mean 'list'?", "Run 'binomic dlq --help' for its commands.");
    }

    @Test
    void aBrokerThatCannotBeReachedIsBlamedOnTheBrokerOptionNotTheApiSetting() {
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new BrokerException("cannot connect to Redis at localhost:1: refused; is redis-server running? check BrokerConfig.url");
        }, "queues", "--queues", "q", "--broker", "redis://localhost:1");

        assertEquals(1, run.exit(), run.toString());
        assertEquals("binomic queues: cannot connect to Redis at localhost:1: refused; is redis-server running? check --broker\n",
                run.err());
    }

    @Test
    void aBrokerUrlWhoseSchemeNoBrokerServesIsABadSettingSaidInOneLineNamingTheOption() {
        CliRun run = CliRun.of(Map.of(), null, "queues", "--queues", "q", "--broker", "http://127.0.0.1:6431");

        assertEquals(2, run.exit(), run.toString());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().startsWith("binomic queues: no broker provider for URL scheme 'http': use memory://, redis:// or"
                + " rediss:// in --broker, or add the module"), run.err());
        assertTrue(run.err().endsWith("; check --broker\n"), run.err());
        assertEquals("", run.out());
    }

    @Test
    void aBrokerUrlGivenAsASystemPropertyIsRefusedInsteadOfTalkingToTheDefaultBroker() {
        CliRun run = CliRun.of(Map.of(), Map.of("binomic.broker.url", "redis://127.0.0.1:6411"), (url, queues) -> {
            throw new AssertionError("must not connect to " + url);
        }, "queues", "--queues", "mail");

        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic queues: system property binomic.broker.url is not read: Binomic takes broker.url from --broker,"
                + " the environment variable BINOMIC_BROKER_URL or a --config file line 'broker.url = VALUE';"
                + " remove -Dbinomic.broker.url\n", run.err());
    }

    @Test
    void everyCommandHasHelp() {
        for (String[] command : new String[][] {{"master"}, {"queues"}, {"workers"}, {"dlq", "list"}, {"dlq", "replay"},
                {"dlq", "purge"}, {"queue", "pause"}, {"queue", "resume"}, {"queue", "partitions"}}) {
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
                Show each queue: ready, pending, delayed, parked, dead letters, consumers, pause and limits.

                Options:
                  --broker URL   broker URL, e.g. redis://user:pass@host:6379/0. Defaults to $BINOMIC_BROKER_URL, else broker.url of the --config file, else redis://localhost:6379
                  --queues A,B   comma-separated queues. Defaults to the queues of the tasks found on the module path
                  --help         show this help

                READY: waiting to be fetched. PENDING: fetched, not yet acknowledged (running, or
                stranded until reclaim). DELAYED: waiting for their due time (DELAY tasks, retry backoff)
                or for a rate limit or a concurrency slot. PARKED: held back by a pause of the queue or
                of their task until it is resumed (no due time brings them back; not in DELAYED). DEAD:
                in the dead-letter queue ('binomic dlq list'). PAUSED: yes for a paused queue ('binomic
                queue pause'), else the tasks paused one by one, else -. LIMITS: the queue's own rate
                and concurrency limits ('binomic queue limit'), else - (limits declared by tasks in code
                are not shown).
                """, run("queues", "--help").out());
    }

    @Test
    void unknownOptionNamesItAndShowsTheCommandUsage() {
        assertUsageError(run("queues", "--workers", "3"), "binomic queues: unknown option --workers",
                "Run 'binomic queues --help' for its options.");
    }

    @Test
    void aMistypedOptionNamesTheOptionMeant() {
        assertUsageError(run("queues", "--queus", "mail"), "binomic queues: unknown option --queus; did you mean --queues?",
                "Run 'binomic queues --help' for its options.");
        assertUsageError(run("queue", "pause", "mail", "--brokr", "redis://h:6379"),
                "binomic queue pause: unknown option --brokr; did you mean --broker?", "Run 'binomic queue pause --help' for its options.");
        assertUsageError(run("job", "submit", "--task", "t", "--queue", "q", "--creat"),
                "binomic job submit: unknown option --creat; did you mean --create?", "Run 'binomic job submit --help' for its options.");
    }

    @Test
    void malformedNumberIsAUsageError() {
        assertUsageError(run("master", "--workers", "many"), "binomic master: --workers must be a whole number, was 'many'",
                "Run 'binomic master --help' for its options.");
    }

    @Test
    void malformedDurationIsAUsageError() {
        assertUsageError(run("master", "--heartbeat-interval", "5 parsecs"),
                "binomic master: --heartbeat-interval must be a duration such as 500ms, 5s, 2m, 1h, 14d or PT5S, was '5 parsecs'",
                "Run 'binomic master --help' for its options.");
    }

    @Test
    void optionWithoutValueIsAUsageError() {
        assertUsageError(run("master", "--broker"), "binomic master: --broker needs a value (URL)",
                "Run 'binomic master --help' for its options.");
    }

    @Test
    void inconsistentMasterSettingsAreAUsageErrorNamingTheField() {
        assertUsageError(run("master", "--broker", "memory://", "--heartbeat-interval", "5s", "--heartbeat-timeout", "6s"),
                "binomic master: heartbeatTimeout must be at least twice heartbeatInterval (PT5S), was PT6S"
                        + " (master.heartbeatInterval from --heartbeat-interval, master.heartbeatTimeout from --heartbeat-timeout)",
                "Run 'binomic master --help' for its options.");
    }

    /** Found by an outside tester: the second heap size passed silently, and the JVM took it. */
    @Test
    void aHeapSizeGivenTwiceToTheWorkersIsRefusedNamingTheOption() {
        assertUsageError(run("master", "--broker", "memory://", "--queues", "q", "--jvm-option=-Xmx1g", "--jvm-option=-Xmx2g"),
                "binomic master: jvmOptions give -Xmx more than once (-Xmx1g, -Xmx2g), and the JVM would take the last one silently:"
                        + " keep one (master.jvmOptions from --jvm-option)", "Run 'binomic master --help' for its options.");
    }

    /** Found by an outside tester: a bad worker value of a file or the environment was named by its field, with the usage. */
    @Test
    void aBadWorkerSettingOfAFileOrTheEnvironmentNamesItsKeyAndOriginOnOneLine() throws IOException {
        Path file = configFile("worker.concurrency = -3\n");
        assertSettingError(run("master", "--config", file.toString(), "--queues", "mail"),
                "binomic master: concurrency must be >= 1, was -3 (worker.concurrency from " + file + " line 1)");
        assertSettingError(CliRun.of(Map.of("BINOMIC_WORKER_CONCURRENCY", "-3"), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "master", "--queues", "mail"),
                "binomic master: concurrency must be >= 1, was -3 (worker.concurrency from environment variable BINOMIC_WORKER_CONCURRENCY)");
        file = configFile("worker.leaseTimeout = 1s\nworker.pollTimeout = 2s\n");
        assertSettingError(run("master", "--config", file.toString(), "--queues", "mail"),
                "binomic master: leaseTimeout must be longer than pollTimeout (PT2S), was PT1S (worker.leaseTimeout from " + file
                        + " line 1, worker.pollTimeout from " + file + " line 2)");
    }

    @Test
    void aMasterDashboardOffLoopbackWithoutATokenIsAUsageError() {
        assertUsageError(run("master", "--broker", "memory://", "--dashboard-port", "0", "--dashboard-address", "0.0.0.0"),
                "binomic master: a dashboard bound to 0.0.0.0 is reachable from other hosts and needs a token: set one in"
                        + " master.dashboardToken (best as $BINOMIC_MASTER_DASHBOARD_TOKEN) (at least 16 random characters), or bind to 127.0.0.1",
                "Run 'binomic master --help' for its options.");
        assertUsageError(run("master", "--broker", "memory://", "--dashboard-port", "web"),
                "binomic master: --dashboard-port: the dashboard port must be a number 0..65535, was 'web'", "Run 'binomic master --help' for its options.");
        assertUsageError(run("master", "--broker", "memory://", "--dashboard-read-only"),
                "binomic master: --dashboard-read-only has no effect without --dashboard-port: add it, or leave --dashboard-read-only out",
                "Run 'binomic master --help' for its options.");
    }

    /** An error message a handler wrote must not recolour, retitle or overwrite the operator's terminal. */
    @Test
    void controlCharactersOfUserTextAreShownEscapedNotSentToTheTerminal() {
        assertEquals("ansi \\u001b[31mRED\\u001b[0m \\u001b]0;title\\u0007 \\u000d hidden\\u202e",
                Table.printable("ansi \u001b[31mRED\u001b[0m \u001b]0;title\u0007 \r hidden\u202e"));
        assertEquals("plain text, unchanged", Table.printable("plain text, unchanged"));
    }

    /** A read-only setting that is neither true nor false is refused: read as false, it left a dashboard writable. */
    @Test
    void aMasterDashboardReadOnlySettingThatIsNotABooleanIsRefusedNamingWhereItCameFrom() {
        assertSettingError(CliRun.of(Map.of("BINOMIC_MASTER_DASHBOARD_READ_ONLY", "yes"), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "master", "--broker", "memory://", "--dashboard-port", "0"),
                "binomic master: environment variable BINOMIC_MASTER_DASHBOARD_READ_ONLY: master.dashboardReadOnly must be true or"
                        + " false, was 'yes'");
        assertSettingError(CliRun.of(Map.of("BINOMIC_MASTER_DASHBOARD_PORT", "abc"), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "master", "--broker", "memory://"),
                "binomic master: environment variable BINOMIC_MASTER_DASHBOARD_PORT: the dashboard port must be a number 0..65535,"
                        + " was 'abc'");
    }

    /** A refused value of a settings file or variable is one line, as configuration.md says: no usage text after it. */
    private static void assertSettingError(CliRun run, String line) {
        assertEquals(2, run.exit(), run.toString());
        assertEquals("", run.out(), "errors go to stderr only");
        assertEquals(line + "\n", run.err());
    }

    /** Found by an outside tester: these printed the whole usage text after the error. */
    @Test
    void refusedMasterSettingsOfAFileOrTheEnvironmentAreOneLine() throws IOException {
        Path file = configFile("master.workers = -1\n");
        assertSettingError(run("master", "--config", file.toString()),
                "binomic master: workers must be 1.." + WorkerSlots.MAX_SLOTS + ", was -1 (master.workers from " + file + " line 1)");
        file = configFile("master.heartbeatInterval = 5s\nmaster.heartbeatTimeout = 6s\n");
        assertSettingError(run("master", "--config", file.toString(), "--broker", "memory://"),
                "binomic master: heartbeatTimeout must be at least twice heartbeatInterval (PT5S), was PT6S"
                        + " (master.heartbeatInterval from " + file + " line 1, master.heartbeatTimeout from " + file + " line 2)");
        file = configFile("master.dashboardPort = 0\nmaster.dashboardReadOnly = yes\n");
        assertSettingError(run("master", "--config", file.toString(), "--broker", "memory://"),
                "binomic master: " + file + " line 2: master.dashboardReadOnly must be true or false, was 'yes'");
        CliRun fromEnv = CliRun.of(Map.of("BINOMIC_BROKER_URL", "redsi://x:1"), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "master");
        assertEquals(2, fromEnv.exit(), fromEnv.toString());
        assertEquals(1, fromEnv.err().lines().count(), fromEnv.err());
        assertTrue(fromEnv.err().contains("scheme 'redsi'") && fromEnv.err().endsWith("(broker.url from environment variable BINOMIC_BROKER_URL)\n"),
                fromEnv.err());
    }

    /** Found by an outside tester: the file and line were printed twice, before and after the message. */
    @Test
    void aDurationThatDoesNotParseNamesWhereItCameFromOnce() throws IOException {
        Path file = configFile("master.workers = 2\nmaster.heartbeatInterval = 5 seconds\n");
        CliRun run = run("master", "--config", file.toString());
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic master: " + file + " line 2: master.heartbeatInterval must be a duration such as 500ms, 5s, 2m, 1h, 14d"
                + " or PT5S, was '5 seconds'\n", run.err());
    }

    @Test
    void aDashboardOffLoopbackWithoutATokenIsAUsageErrorBeforeAnyConnection() {
        assertUsageError(CliRun.of(Map.of(), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "dashboard", "--address", "0.0.0.0", "--port", "0"),
                "binomic dashboard: a dashboard bound to 0.0.0.0 is reachable from other hosts and needs a token: set one in"
                        + " $BINOMIC_DASHBOARD_TOKEN (at least 16 random characters), or bind to 127.0.0.1",
                "Run 'binomic dashboard --help' for its options.");
    }

    @Test
    void positionalArgumentIsAUsageError() {
        assertUsageError(run("queues", "emails"), "binomic queues: unexpected argument 'emails'", "Run 'binomic queues --help' for its options.");
    }

    @Test
    void dlqWithoutSubcommandListsThem() {
        assertUsageError(run("dlq"), "binomic dlq: say which: list, replay, purge", "Run 'binomic dlq --help' for its commands.");
        CliRun help = run("dlq", "--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().contains("  dlq replay   Put dead letters back"), help.out());
        assertUsageError(run("dlq", "frob"), "binomic dlq: unknown command 'frob'", "Run 'binomic dlq --help' for its commands.");
    }

    @Test
    void replayWithoutSelectionIsRefused() {
        assertUsageError(run("dlq", "replay", "--queues", "q"),
                "binomic dlq replay: say what to replay: --all, --id ID, or a filter (--task, --reason, --error-class)",
                "Run 'binomic dlq replay --help' for its options.");
    }

    @Test
    void purgeWithTwoSelectionsIsRefused() {
        assertUsageError(run("dlq", "purge", "--all", "--task", "send"),
                "binomic dlq purge: --all, --id and the filters exclude each other: choose one way to select",
                "Run 'binomic dlq purge --help' for its options.");
    }

    @Test
    void replayByIdNeedsOneQueue() {
        assertUsageError(run("dlq", "replay", "--id", "1-0", "--queues", "a,b"),
                "binomic dlq replay: --id needs exactly one queue: add --queues QUEUE", "Run 'binomic dlq replay --help' for its options.");
    }

    @Test
    void unknownReasonListsTheValidOnes() {
        assertUsageError(run("dlq", "list", "--reason", "bored"),
                "binomic dlq list: --reason must be one of [MAX_ATTEMPTS, NON_RETRYABLE, DECODE_ERROR, TASK_NOT_FOUND], was 'bored'",
                "Run 'binomic dlq list --help' for its options.");
    }

    @Test
    void repeatedSingleOptionIsAUsageError() {
        assertUsageError(run("master", "--workers", "1", "--workers=2"), "binomic master: --workers is given more than once",
                "Run 'binomic master --help' for its options.");
    }

    @Test
    void brokerUrlWithoutSchemeIsAUsageError() {
        assertUsageError(run("queues", "--broker", "localhost"),
                "binomic queues: --broker must start with a scheme such as redis:// or memory://, was 'localhost'",
                "Run 'binomic queues --help' for its options.");
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

    @TempDir
    Path dir;

    private Path configFile(String text) throws IOException {
        return Files.writeString(dir.resolve("binomic.conf"), text);
    }

    /** What the inspection commands connect to, given the environment and the command line. */
    private static String urlSeen(Map<String, String> env, String... args) {
        String[] seen = new String[1];
        CliRun.of(env, (url, queues) -> {
            seen[0] = url;
            throw new IllegalStateException("stop here");
        }, args);
        return seen[0];
    }

    @Test
    void brokerUrlPrecedenceIsFileThenEnvironmentThenFlag() throws IOException {
        Path file = configFile("# the file\nbroker.url = redis://from-file:6379\nbroker.keyPrefix = app\n");
        assertEquals("redis://from-file:6379", urlSeen(Map.of(), "queues", "--config", file.toString(), "--queues", "q"));
        assertEquals("redis://from-file:6379", urlSeen(Map.of("BINOMIC_CONFIG", file.toString()), "queues", "--queues", "q"),
                "BINOMIC_CONFIG names the file when --config is absent");
        assertEquals("redis://from-env:6379", urlSeen(Map.of("BINOMIC_BROKER_URL", "redis://from-env:6379"),
                "--config=" + file, "queues", "--queues", "q"));
        assertEquals("redis://from-flag:6379", urlSeen(Map.of("BINOMIC_BROKER_URL", "redis://from-env:6379"),
                "queues", "--broker", "redis://from-flag:6379", "--config", file.toString(), "--queues", "q"));
    }

    @Test
    void missingConfigFileIsOneLineThatNamesTheFixAndExitsTwo() {
        Path missing = dir.resolve("nope.conf");
        CliRun run = run("queues", "--config", missing.toString());
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic queues: configuration file " + missing + " does not exist: give an existing file to --config"
                + " or BINOMIC_CONFIG\n", run.err());
    }

    @Test
    void unknownOrRepeatedSettingInTheFileIsOneLineNamingFileAndLine() throws IOException {
        Path file = configFile("broker.url = redis://h:6379\nbroker.keyprefix = app\n");
        CliRun run = run("master", "--config", file.toString());
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic master: " + file + " line 2: unknown setting 'broker.keyprefix'; did you mean 'broker.keyPrefix'?; the settings are listed in"
                + " module-info-docs/configuration.md\n", run.err());

        configFile("worker.concurrency = 4\n\nworker.concurrency = 8\n");
        run = run("master", "--config", file.toString());
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic master: " + file + " line 3: worker.concurrency is set twice (first on line 1); keep one\n",
                run.err());
    }

    @Test
    void badValueFromTheEnvironmentNamesTheVariable() {
        CliRun run = CliRun.of(Map.of("BINOMIC_BROKER_KEY_PREFIX", "has space"), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "master", "--broker", "memory://");
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic master: keyPrefix must be 1-64 of letters, digits, '_', '.', ':', '-', was 'has space'"
                + " (broker.keyPrefix from environment variable BINOMIC_BROKER_KEY_PREFIX)\n", run.err());
        run = CliRun.of(Map.of("BINOMIC_TASK_TIMEOUT", "soon"), (url, queues) -> {
            throw new AssertionError("no connection with a bad setting");
        }, "queues", "--queues", "q");
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic queues: environment variable BINOMIC_TASK_TIMEOUT: task.timeout must be a duration such as 500ms,"
                + " 5s, 2m, 1h, 14d or PT5S, was 'soon'\n", run.err());
    }

    @Test
    void configGivenTwiceIsAUsageError() throws IOException {
        Path file = configFile("");
        CliRun run = run("--config", file.toString(), "queues", "--config", file.toString());
        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic: --config is given more than once: give one settings file\n", run.err());
    }

    /** Found by the outside-in run: an empty list meant "every queue", and a bad name was a failure (exit 1). */
    @Test
    void anEmptyOrInvalidQueueListIsAUsageError() {
        assertUsageError(run("queues", "--queues", ""), "binomic queues: --queues is empty: name at least one, or leave the option out",
                "Run 'binomic queues --help' for its options.");
        assertUsageError(run("queues", "--queues", "a,,b"), "binomic queues: --queues has an empty name in 'a,,b': list names separated"
                + " by commas", "Run 'binomic queues --help' for its options.");
        assertUsageError(run("dlq", "list", "--queues", "a b"),
                "binomic dlq list: --queues: 'a b' is not a queue name (1-200 of letters, digits, '_', '.', ':', '-')",
                "Run 'binomic dlq list --help' for its options.");
    }

    /** Found by the second outside-in run: the file's Redisson YAML silently won over --broker and BINOMIC_BROKER_URL. */
    @Test
    void aUrlFromTheEnvironmentOrTheCommandLineNextToTheFilesRedissonFileIsRefusedNotIgnored() throws IOException {
        Path yaml = Files.writeString(dir.resolve("redisson.yaml"), "singleServerConfig:\n  address: redis://127.0.0.1:1\n");
        Path file = configFile("broker.url = redis://from-file:6379\nbroker.option.redisson.config = " + yaml + "\n");

        CliRun fromEnv = CliRun.of(Map.of("BINOMIC_BROKER_URL", "redis://other:6379"), null, "queues", "--config", file.toString());
        assertEquals(2, fromEnv.exit(), fromEnv.toString());
        assertTrue(fromEnv.err().startsWith("binomic queues: broker.url from environment variable BINOMIC_BROKER_URL and"
                + " broker.option.redisson.config from " + file + " line 2 both say where Redis is"), fromEnv.err());

        CliRun fromFlag = CliRun.of(Map.of(), null, "queues", "--config", file.toString(), "--broker", "redis://other:6379", "--queues", "q");
        assertEquals(2, fromFlag.exit(), "a refused setting, as from the environment: " + fromFlag);
        assertTrue(fromFlag.err().startsWith("binomic queues: broker.url from --broker and broker.option.redisson.config from " + file
                + " line 2 both say where Redis is, and the Redisson file would win"), fromFlag.err());
    }

    @Test
    void aConfigFileThatIsADirectoryIsOneLineAndExitsTwo() {
        CliRun run = run("queues", "--config", dir.toString());
        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().startsWith("binomic queues: cannot read the configuration file " + dir), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
    }

    @Test
    void aBadMasterSettingNamesItsKeyAndWhereItCameFrom() throws IOException {
        Path file = configFile("master.workers = 0\n");
        CliRun run = run("master", "--config", file.toString());
        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().lines().findFirst().orElseThrow().endsWith("(master.workers from " + file + " line 1)"), run.err());
    }

    /** Found by an outside tester: the CLI's own default URL counted as given, against a Redisson file that names the server. */
    @Test
    void aRedissonFileAloneIsNotInConflictWithTheDefaultUrlButAGivenUrlIs() throws IOException {
        Path yaml = Files.writeString(dir.resolve("redisson.yaml"), "singleServerConfig:\n  address: redis://127.0.0.1:1\n");
        Path rs = Files.writeString(dir.resolve("rs.conf"), "broker.option.redisson.config = " + yaml + "\n");
        Settings settings = Settings.ofFile(rs);

        RuntimeException alone = assertThrows(RuntimeException.class, () -> BinomicCli.connect(settings, Command.DEFAULT_URL, List.of("mail")));
        assertFalse(alone.getMessage().contains("both say where Redis is"), alone.getMessage());
        RuntimeException given = assertThrows(RefusedSettingException.class,
                () -> BinomicCli.connect(settings, "redis://other:6379", List.of("mail")));
        assertTrue(given.getMessage().startsWith("broker.url from --broker and broker.option.redisson.config from " + rs + " line 1 both"
                + " say where Redis is"), given.getMessage());
    }

    /** Found by an outside tester: a missing Redisson file was reported as a conflict with the default URL, exit 1. */
    @Test
    void aRedissonFileThatDoesNotExistIsARefusedSettingNamingTheKey() throws IOException {
        Path file = configFile("broker.option.redisson.config = " + dir.resolve("missing.yaml") + "\n");

        assertSettingError(run("queues", "--queues", "mail", "--config", file.toString()),
                "binomic queues: " + file + " line 1: broker.option.redisson.config: the Redisson file " + dir.resolve("missing.yaml")
                        + " does not exist; give an existing file, or unset broker.option.redisson.config");
    }

    /** Found by an outside tester: a mistyped broker option exited 1, as if the operation had failed. */
    @Test
    void aMistypedBrokerOptionIsARefusedSettingWithExitTwoNamingTheKey() {
        CliRun run = CliRun.of(Map.of("BINOMIC_BROKER_URL", "memory://", "BINOMIC_BROKER_OPTION_EVICTION_ALOWED", "true"), null,
                "queues", "--queues", "mail");

        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().startsWith("binomic queues: broker.option.eviction.alowed is not an option of the memory broker"), run.err());
        assertTrue(run.err().endsWith("(broker.option.eviction.alowed from environment variable BINOMIC_BROKER_OPTION_EVICTION_ALOWED)\n"),
                run.err());
    }

    /** Found by an outside tester: a master refused a mistyped broker option of its settings file with exit 1 and its Java name. */
    @Test
    void aMasterRefusesAMistypedBrokerOptionOfItsFileNamingTheKeyAndLine() throws IOException {
        Path file = configFile("broker.url = memory://\nbroker.option.priority.fairnes = 4\n");

        assertSettingError(run("master", "--queues", "mail", "--config", file.toString()),
                "binomic master: broker.option.priority.fairnes is not an option of the memory broker; did you mean"
                        + " 'broker.option.priority.fairness'? Its options are broker.option.priority.fairness"
                        + " (broker.option.priority.fairnes from " + file + " line 2)");
    }

    /** Found by an outside tester: the CLI's messages named the Java API's fields where a user types keys and flags. */
    @Test
    void libraryHintsNameTheSettingsKeysAndFlagsNotTheApiFields() {
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new BrokerException("cannot connect to Redis at localhost:1: WRONGPASS; check BrokerConfig.username and"
                    + " BrokerConfig.password (or user:password@ in BrokerConfig.url)");
        }, "queues", "--queues", "q");
        assertEquals("binomic queues: cannot connect to Redis at localhost:1: WRONGPASS; check broker.username"
                + " (BINOMIC_BROKER_USERNAME) and broker.password (BINOMIC_BROKER_PASSWORD) (or user:password@ in --broker)\n", run.err());

        CliRun submit = CliRun.of(Map.of(), (url, queues) -> {
            throw new IllegalArgumentException("task 'greet': debounce needs a delay, and this job has none: declare a DELAY task,"
                    + " or give SubmitOptions.delay (SubmitOptions.partitionKey stays)");
        }, "job", "submit", "--task", "greet", "--queue", "q", "--debounce", "k");
        assertTrue(submit.err().startsWith("binomic job submit: task 'greet': debounce needs a delay, and this job has none: declare a"
                + " DELAY task, or give --delay (SubmitOptions.partitionKey stays)"), "only the command's own options: " + submit.err());
    }

    /** Found by an outside tester: "check --broker" when the URL came from the --config file. */
    @Test
    void aBrokerHintNamesWhereTheUrlCameFrom() throws IOException {
        Path file = configFile("broker.url = redis://from-file:1\n");
        CliRun run = CliRun.of(Map.of(), (url, queues) -> {
            throw new BrokerException("cannot connect to Redis at from-file:1: refused; is redis-server running? check BrokerConfig.url");
        }, "queues", "--queues", "q", "--config", file.toString());
        assertEquals("binomic queues: cannot connect to Redis at from-file:1: refused; is redis-server running? check broker.url (from "
                + file + " line 1)\n", run.err());
    }
}
