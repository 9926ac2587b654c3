package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.NonRetryableException;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.it.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The {@code binomic} inspection and dead-letter commands against real Redis data. */
class CliOnRedisTest {
    private final RedisServer redis = RedisServer.shared();
    /** Fixed length, so that the expected tables below have fixed column widths. */
    private final String queue = String.format("cli-%012d", System.nanoTime() % 1_000_000_000_000L);

    private static CliRun cli(String... args) {
        return CliRun.of(args);
    }

    private Binomic client(TaskBinding<?, ?>... bindings) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).build()).build();
        Binomic.Builder builder = Binomic.builder().config(config);
        for (TaskBinding<?, ?> binding : bindings) {
            builder.handle(binding);
        }
        return builder.build().start();
    }

    /** Three non-retryable failures of one task and two exhausted retries of another. */
    @BeforeEach
    void fillTheDeadLetterQueue() {
        Task<Integer, Void> fails = Task.builder("cli-fails", Integer.class).queue(queue).build();
        Task<Integer, Void> flaky = Task.builder("cli-flaky", Integer.class).queue(queue).maxAttempts(1).build();
        TaskBinding<Integer, Void> failing = fails.handledBy(n -> {
            throw new NonRetryableException("bad input " + n);
        });
        TaskBinding<Integer, Void> dbDown = flaky.handledBy(n -> {
            throw new IllegalStateException("db down");
        });
        try (Binomic client = client(failing, dbDown)) {
            client.submitAll(fails, List.of(1, 2, 3));
            client.submitAll(flaky, List.of(4, 5));
            client.startWorker();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (client.deadLetters().count(queue, DeadLetterFilter.all()) < 5) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("5 dead letters expected: " + client.queueStats(queue));
                }
                Fixture.sleep(50);
            }
        }
    }

    @Test
    void queuesShowsTheDeadLettersOfTheQueue() {
        CliRun run = cli("queues", "--broker", redis.url(), "--queues", queue);
        assertEquals(0, run.exit(), run.toString());
        String[] lines = run.out().split("\n");
        assertEquals(2, lines.length, run.out());
        assertTrue(lines[0].matches("QUEUE +READY +PENDING +DELAYED +PARKED +DEAD +CONSUMERS +PAUSED +LIMITS"), lines[0]);
        assertTrue(lines[1].matches(queue + " +0 +0 +0 +0 +5 +\\d+ +- +-"), lines[1]);
    }

    /** One queue's stream of another type made 'queues' print nothing, for the healthy queues too. */
    @Test
    void queuesShowsTheOtherQueuesWhenOneQueuesStreamHasTheWrongTypeAndFailsNamingIt() {
        String broken = queue + "-broken";
        redis.call("SET", "binomic:{" + broken + "}:stream", "notastream");
        try {
            CliRun run = cli("queues", "--broker", redis.url(), "--queues", queue + "," + broken);
            assertEquals(1, run.exit(), run.toString());
            String[] lines = run.out().split("\n");
            assertEquals(3, lines.length, run.out());
            assertTrue(lines[1].matches(queue + " +0 +0 +0 +0 +5 +\\d+ +- +-"), lines[1]);
            assertTrue(lines[2].matches(broken + " +\\? +\\? +\\? +\\? +\\? +\\? +\\? +\\?"), lines[2]);
            assertTrue(run.err().startsWith("binomic queues: the figures of 1 queue(s) could not be read (shown as ?): '" + broken
                    + "': "), run.err());
            assertTrue(run.err().contains("WRONGTYPE") && run.err().contains("with TYPE, then delete or rename"), run.err());
        } finally {
            redis.call("DEL", "binomic:{" + broken + "}:stream");
        }
    }

    @Test
    void dlqListGroupsByTaskReasonAndFailureClass() {
        CliRun run = cli("dlq", "list", "--broker", redis.url(), "--queues", queue);
        assertEquals(0, run.exit(), run.toString());
        assertEquals("""
                QUEUE             TASK       REASON         ERROR CLASS                           COUNT
                %1$s  cli-fails  NON_RETRYABLE  io.binomic.api.NonRetryableException      3
                %1$s  cli-flaky  MAX_ATTEMPTS   java.lang.IllegalStateException           2
                5 dead letter(s)
                """.formatted(queue), run.out());
    }

    @Test
    void dlqListDetailsShowsTheFailureOfEachEntry() {
        CliRun run = cli("dlq", "list", "--broker", redis.url(), "--queues", queue, "--details", "--task", "cli-flaky");
        assertEquals(0, run.exit(), run.toString());
        String[] lines = run.out().split("\n");
        assertEquals(4, lines.length, run.out());
        for (int i = 1; i <= 2; i++) {
            assertTrue(lines[i].matches("\\d+-\\d+ +" + queue + " +cli-flaky +MAX_ATTEMPTS +java.lang.IllegalStateException +1 +\\S+Z +db down"),
                    lines[i]);
        }
        assertEquals("2 dead letter(s) shown", lines[3]);
    }

    @Test
    void replayByTaskThenPurgeTheRest() {
        CliRun replay = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--task", "cli-fails");
        assertEquals(0, replay.exit(), replay.toString());
        assertEquals("replayed 3 dead letter(s) of queue " + queue + "\n", replay.out());

        CliRun purge = cli("dlq", "purge", "--broker", redis.url(), "--queues", queue, "--all");
        assertEquals(0, purge.exit(), purge.toString());
        assertEquals("purged 2 dead letter(s) of queue " + queue + "\n", purge.out());

        CliRun queues = cli("queues", "--broker", redis.url(), "--queues", queue);
        assertTrue(queues.out().split("\n")[1].matches(queue + " +3 +0 +0 +0 +0 +\\d+ +- +-"), queues.out());
    }

    @Test
    void replayOfAnUnknownIdFailsWithExitOne() {
        CliRun run = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--id", "1-1");
        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.err().endsWith("binomic dlq replay: no dead letter 1-1 in queue " + queue + "\n"), run.err());
    }

    @Test
    void unreachableRedisIsAFailureWithExitOne() throws Exception {
        int closedPort;
        try (var socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        CliRun run = cli("queues", "--broker", "redis://127.0.0.1:" + closedPort, "--queues", queue);
        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.err().contains("binomic queues: "), run.err());
        assertEquals("", run.out());
    }

    /** Before, 'queues' and 'dlq list' created the stream and the consumer group of any name they were given. */
    @Test
    void readOnlyCommandsOnAMistypedQueueCreateNothing() {
        String typo = queue + "-typo";

        CliRun queues = cli("queues", "--broker", redis.url(), "--queues", typo);
        CliRun list = cli("dlq", "list", "--broker", redis.url(), "--queues", typo, "--any-queue");

        assertEquals(0, queues.exit(), queues.toString());
        assertTrue(queues.out().split("\n")[1].matches(typo + " +0 +0 +0 +0 +0 +0 +- +-"), queues.out());
        assertEquals(0, list.exit(), list.toString());
        assertEquals(List.of(), redis.call("KEYS", "binomic:{" + typo + "}:*"), "nothing created for " + typo);
    }

    /**
     * Found by an outside tester: a mistyped --task replayed nothing and exited 0. The task names of the queue's dead letters
     * are known from Redis, so a CLI without the application's modules names the one meant.
     */
    @Test
    void aMistypedDlqTaskFilterIsRefusedAndAReplayOfNothingExitsOne() {
        CliRun typo = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--task", "cli-fials");
        assertEquals(2, typo.exit(), typo.toString());
        assertTrue(typo.err().startsWith("binomic dlq replay: task 'cli-fials' is not known: no task on the module path has that name"
                + " and no dead letter of queue " + queue + " is of it; did you mean 'cli-fails'?"), typo.err());
        CliRun asTyped = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--task", "cli-fials", "--any-task");
        assertEquals(1, asTyped.exit(), asTyped.toString());
        assertEquals("binomic dlq replay: nothing matched in queue " + queue + " on broker " + redis.url() + "; nothing changed\n",
                asTyped.err());
        assertEquals(5, cliDeadLetters(), "nothing replayed");
    }

    /** Found by outside testers: a mistyped queue listed no dead letters, and a replay or purge of it reported success. */
    @Test
    void dlqCommandsRefuseAMistypedQueueNamingTheOneTheBrokerHolds() {
        String typo = queue + "x";
        for (String verb : List.of("list", "replay", "purge")) {
            CliRun run = verb.equals("list") ? cli("dlq", "list", "--broker", redis.url(), "--queues", typo)
                    : cli("dlq", verb, "--broker", redis.url(), "--queues", typo, "--all");
            assertEquals(2, run.exit(), run.toString());
            assertTrue(run.err().startsWith("binomic dlq " + verb + ": queue '" + typo + "' is not known: no task on the module path or"
                    + " worker.queues setting names it, and the broker holds no job, consumer group, dead letter, pause, limit or recent"
                    + " activity of it; did you mean '" + queue + "'? Else add --any-queue to use the name as typed\n"), run.err());
        }
        assertEquals(5, cliDeadLetters(), "nothing replayed or purged");
        assertEquals(List.of(), redis.call("KEYS", "binomic:{" + typo + "}:*"), "nothing created for " + typo);
    }

    /** Two entries too broken to decode a message from, and one whose payload does not decode: three DECODE_ERRORs. */
    private void addDecodeErrors() {
        String stream = "binomic:{" + queue + "}:stream";
        redis.call("XADD", stream, "*", "task", "cli-fails", "note", "no id");
        redis.call("XADD", stream, "*", "task", "cli-fails", "attempt", "zero");
        redis.call("XADD", stream, "*", "id", java.util.UUID.randomUUID().toString(), "task", "cli-fails", "queue", queue,
                "attempt", "1", "enqueuedAt", Long.toString(System.currentTimeMillis()), "payload", "\"not a number\"",
                "headers", "{}");
        Task<Integer, Void> fails = Task.builder("cli-fails", Integer.class).queue(queue).build();
        try (Binomic client = client(fails.handledBy(n -> null))) {
            client.startWorker();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (client.deadLetters().count(queue, DeadLetterFilter.all().withReason(DeadLetterReason.DECODE_ERROR)) < 3) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("3 decode errors expected: " + client.deadLetters().groups(queue));
                }
                Fixture.sleep(50);
            }
        }
    }

    /** Before, it said "replayed 1" and nothing of the two it skipped. */
    @Test
    void replayByReasonSaysWhatItSkippedAndWhy() {
        addDecodeErrors();

        CliRun run = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--reason", "DECODE_ERROR");

        assertEquals(1, run.exit(), run.toString());
        assertEquals("replayed 1 dead letter(s) of queue " + queue + "\n", run.out());
        assertEquals("binomic dlq replay: skipped 2 dead letter(s) of queue " + queue + " that cannot be replayed: their message"
                + " could not be decoded, only its raw fields are kept; see them with 'binomic dlq list --details --queues " + queue
                + "', delete them with 'binomic dlq purge --id ID'\n", run.err());
    }

    /** Before, an existing but broken letter was reported as "no dead letter". */
    @Test
    void replayByIdOfABrokenLetterSaysWhyItCannotBeReplayed() {
        addDecodeErrors();
        String brokenId = ((List<?>) redis.call("XRANGE", "binomic:{" + queue + "}:dlq", "-", "+")).stream()
                .map(e -> (List<?>) e).filter(e -> ((List<?>) e.get(1)).contains("raw"))
                .map(e -> (String) e.get(0)).findFirst().orElseThrow();

        CliRun run = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--id", brokenId);

        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.err().startsWith("binomic dlq replay: dead letter " + brokenId + " of queue " + queue
                + " cannot be replayed: its message could not be decoded (DECODE_ERROR)"), run.err());
    }

    /** Before, a malformed id dumped a Lua script and Netty buffers, with exit 1. */
    @Test
    void aMalformedIdIsABadUsageSaidInOneLine() {
        CliRun run = cli("dlq", "replay", "--broker", redis.url(), "--queues", queue, "--id", "not-an-id");

        assertEquals(2, run.exit(), run.toString());
        assertEquals("binomic dlq replay: 'not-an-id' is not a dead-letter id: Redis ids look like 1764500000000-0"
                + " (see 'binomic dlq list --details')", run.err().lines().findFirst().orElseThrow());
        assertEquals(List.of("Run 'binomic dlq replay --help' for its options."), run.err().lines().skip(1).toList(),
                "where the help is, not the usage: " + run.err());
        assertTrue(run.err().lines().noneMatch(l -> l.contains("redis.call") || l.contains("Netty") || l.contains("Buf")), run.err());
        assertEquals(5, cliDeadLetters());
    }

    private long cliDeadLetters() {
        CliRun run = cli("dlq", "list", "--broker", redis.url(), "--queues", queue);
        return Long.parseLong(run.out().lines().reduce((a, b) -> b).orElseThrow().split(" ")[0]);
    }
}
