package io.binomic.it;

import static io.binomic.it.UpgradeFixture.A;
import static io.binomic.it.UpgradeFixture.B;
import static io.binomic.it.UpgradeFixture.DONE;
import static io.binomic.it.UpgradeFixture.LIMITED;
import static io.binomic.it.UpgradeFixture.PARTS;
import static io.binomic.it.UpgradeFixture.PAUSED;
import static io.binomic.it.UpgradeFixture.TICKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.SubmitOptions;
import io.binomic.api.TaskContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.TickResult;
import io.binomic.core.Binomic;
import io.binomic.it.UpgradeFixture.Note;
import io.binomic.it.UpgradeFixture.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the last release left in users' Redis is read by this code. The fixture
 * ({@code src/test/resources/upgrade/dce0933/}, written by {@link UpgradeFixtureWriter} on commit
 * dce0933; its README says what is in it) is put into a fresh redis-server with plain commands
 * (XADD under the stored entry ids, XGROUP CREATE at the stored last-delivered id, HSET, ZADD, SADD,
 * SET, PEXPIRE of the stored time to live), and then this code's worker, job lookups, dead-letter
 * operations, pause state, unique claims, limits and tick claims must make sense of it.
 *
 * <p>The delayed sets hold a DELAY job and a debounced job due 1 h after the fixture was written
 * and a retry due 10 years after: where a test needs them to run, {@link #makeDelayedDueSoon}
 * rewrites every score below the parked mark to one second after Redis' clock, so they move and run
 * within the test. Parked members (paused jobs, score 8000000000000000) keep their score.
 */
class UpgradeFromStoredEntriesIT {
    static final String COMMIT = "dce0933";
    private static final String KEYS = "/upgrade/" + COMMIT + "/keys.jsonl";
    private static final long PARKED = 8_000_000_000_000_000L;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static RedisServer redis;
    private List<JsonNode> keys;
    private final Map<String, CopyOnWriteArrayList<Run>> runs = new ConcurrentHashMap<>();

    /** What a handler saw: the key is an order's or note's id, or the message id of a tick. */
    record Run(String task, Object argument, int attempt, Map<String, String> headers, TaskContext context) { }

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.startNew();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** A fresh Redis holding the fixture. */
    private void load() {
        redis.call("FLUSHALL");
        keys = StoredEntries.restore(redis, KEYS);
    }

    /** Makes what waits in a delayed set (parked members aside) due one second from now, by Redis' clock. */
    private void makeDelayedDueSoon() {
        List<?> time = (List<?>) redis.call("TIME");
        long due = Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000 + 1000;
        for (JsonNode key : keys) {
            if (key.get("type").asText().equals("zset") && key.get("key").asText().endsWith(":delayed")) {
                for (JsonNode member : key.get("members")) {
                    if (Double.parseDouble(member.get("score").asText()) < PARKED) {
                        redis.call("ZADD", key.get("key").asText(), "XX", Long.toString(due), member.get("member").asText());
                    }
                }
            }
        }
    }

    private Binomic client() {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(UpgradeFixture.QUEUES).pollTimeout(Duration.ofMillis(100))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        return Binomic.builder().config(config)
                .handle(UpgradeFixture.PLAIN, o -> {
                    record(o.id(), o);
                    return null;
                })
                .handle(UpgradeFixture.TRACKED, o -> record(o.id(), o))
                .handle(UpgradeFixture.LATER, o -> record(o.id(), o))
                .handle(UpgradeFixture.NOTE, n -> record(n.text(), n))
                .handle(UpgradeFixture.HELD, n -> record(n.text(), n))
                .handle(UpgradeFixture.SUCCEEDS, o -> record(o.id(), o))
                .handle(UpgradeFixture.FAILS, o -> record(o.id(), o))
                .handle(UpgradeFixture.RETRIES, o -> record(o.id(), o))
                .handle(UpgradeFixture.REFUSES, o -> record(o.id(), o))
                .handle(UpgradeFixture.RETIRED, o -> record(o.id(), o))
                .handle(UpgradeFixture.THROTTLED, o -> record(o.id(), o))
                .handle(UpgradeFixture.IDLE, o -> record(o.id(), o))
                .handle(UpgradeFixture.SPREAD, o -> record(o.id(), o))
                .handle(UpgradeFixture.TICK, () -> {
                    record(TaskContext.current().messageId().toString(), null);
                })
                .build().start();
    }

    private String record(String key, Object argument) {
        TaskContext context = TaskContext.current();
        runs.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>())
                .add(new Run(context.task(), argument, context.attempt(), Map.copyOf(context.headers()), context));
        return context.task() + " " + key;
    }

    @Test
    void everyStoredMessageRunsOnceWithItsArgumentAndPausedOnesWaitUntilResumed() {
        load();
        UUID tick = idOfTick();
        List<String> ready = List.of("o-1", "o-2", "o-4", "o-5", "o-7", "o-6", "o-11", "o-10", "n-2", "n-3", "o-42", "o-43", "o-30", "o-31",
                tick.toString());
        try (Binomic binomic = client()) {
            assertStats(binomic.queueStats(A), 5, 2, 0);
            assertStats(binomic.queueStats(B), 2, 1, 0);
            assertStats(binomic.queueStats(DONE), 0, 1, 5);
            assertStats(binomic.queueStats(LIMITED), 2, 0, 0);
            assertStats(binomic.queueStats(PAUSED), 1, 0, 0);
            // up-ticks is left out: the client fires its own ticks of every2s meanwhile
            assertStats(binomic.queueStats(PARTS), 2, 0, 0);
            assertEquals(QueueLimits.builder().rateLimit(UpgradeFixture.QUEUE_RATE).build(), binomic.queues().limits(LIMITED),
                    "the stored limit fields read as the limit that wrote them");

            makeDelayedDueSoon();
            binomic.startWorker();
            Await.until(Duration.ofSeconds(30), () -> runs.keySet().containsAll(ready), () -> "ran so far: " + runs.keySet() + " of " + ready);

            assertEquals(new Order("o-1", 1, List.of("a", "b")), only("o-1").argument());
            assertEquals("acme", only("o-1").headers().get("tenant"));
            assertEquals(new Order("o-2", 2, List.of()), only("o-2").argument());
            assertEquals(new Order("o-4", 4, List.of("traced")), only("o-4").argument());
            assertEquals("globex", only("o-4").headers().get("tenant"));
            assertEquals(UpgradeFixtureWriter.TRACE, only("o-4").context().traceContext().orElseThrow());
            assertEquals(new Order("o-5", 5, List.of("unique")), only("o-5").argument());
            assertEquals(new Order("o-7", 7, List.of("json")), only("o-7").argument(), "submitted as JSON");
            assertEquals(new Order("o-6", 6, List.of("delayed")), only("o-6").argument(), "the DELAY job, moved when due");
            assertEquals(new Order("o-11", 11, List.of("debounced")), only("o-11").argument(), "the debounced job, moved when due");
            assertEquals(new Note("n-2"), only("n-2").argument());
            assertEquals(new Note("n-3"), only("n-3").argument());
            assertEquals(new Order("o-42", 42, List.of()), only("o-42").argument(), "admitted under the stored rate limit");
            assertEquals(new Order("o-43", 43, List.of()), only("o-43").argument());
            assertEquals(new Order("o-30", 30, List.of()), only("o-30").argument(), "partition 1");
            assertEquals(new Order("o-31", 31, List.of()), only("o-31").argument(), "partition 0");
            assertEquals("every2s", only(tick.toString()).task(), "the stored tick's message");
            Run retry = only("o-10");
            assertEquals(new Order("o-10", 10, List.of()), retry.argument());
            assertEquals(2, retry.attempt(), "the retry runs as the attempt it was stored as");
            for (String key : ready) {
                if (!key.equals("o-10") && !key.equals(tick.toString())) {
                    assertEquals(1, only(key).attempt(), key);
                }
            }

            JobHandle<String> traced = binomic.job(UpgradeFixture.TRACKED, idOf("o-4"));
            assertEquals("tracked o-4", traced.await(Duration.ofSeconds(10)));
            assertEquals(UpgradeFixtureWriter.TRACE, traced.status().traceContext().orElseThrow());
            JobHandle<String> retried = binomic.job(UpgradeFixture.RETRIES, idOf("o-10"));
            assertEquals("retries o-10", retried.await(Duration.ofSeconds(10)));
            assertEquals(List.of(1, 2), retried.status().attempts().stream().map(JobStatus.Attempt::attempt).toList(),
                    "the stored attempt and this one: " + retried.status().attempts());

            assertTrue(binomic.queues().isPaused(PAUSED));
            assertTrue(binomic.queues().isTaskPaused(B, UpgradeFixture.HELD.name()));
            assertFalse(runs.containsKey("o-20") || runs.containsKey("n-1"), "paused jobs wait: " + runs.keySet());
            // waiting in the stream, or parked in the delayed set by a worker that read it before its pause
            QueueStats paused = binomic.queueStats(PAUSED);
            assertEquals(1, paused.ready() + paused.delayed(), paused.toString());
            assertEquals(0, paused.deadLetters(), paused.toString());
            assertFalse(runs.containsKey("o-8") || runs.containsKey("o-9") || runs.containsKey("o-12") || runs.containsKey("o-13"),
                    "ended jobs do not run again: " + runs.keySet());

            binomic.queues().resume(PAUSED);
            binomic.queues().resumeTask(B, UpgradeFixture.HELD.name());
            Await.until(Duration.ofSeconds(30), () -> runs.containsKey("o-20") && runs.containsKey("n-1"), () -> "ran so far: " + runs.keySet());
            assertEquals(new Order("o-20", 20, List.of()), only("o-20").argument(), "waited in the paused queue");
            assertEquals(new Note("n-1"), only("n-1").argument(), "parked while its task was paused");
        }
    }

    @Test
    void jobRecordsReadAsTheyWereLeft() {
        load();
        try (Binomic binomic = client()) {
            JobHandle<String> shipped = binomic.job(UpgradeFixture.SUCCEEDS, idOfRecord("succeeds", "SUCCEEDED"));
            assertEquals("shipped o-8", shipped.await(Duration.ofSeconds(5)));
            JobStatus succeeded = shipped.status();
            assertEquals(JobState.SUCCEEDED, succeeded.state());
            assertEquals(1, succeeded.attempts().size());
            assertTrue(succeeded.startedAt().isPresent() && succeeded.endedAt().isPresent() && succeeded.worker().isPresent(), succeeded.toString());

            JobStatus failed = binomic.job(idOf("o-9")).status();
            assertEquals(JobState.DEAD_LETTERED, failed.state());
            assertEquals(DeadLetterReason.MAX_ATTEMPTS, failed.deadLetterReason().orElseThrow());
            assertTrue(failed.error().orElseThrow().contains("no stock for o-9"), failed.error().toString());

            JobStatus retrying = binomic.job(idOf("o-10")).status();
            assertEquals(JobState.RETRYING, retrying.state());
            assertTrue(retrying.due().orElseThrow(() -> new AssertionError("the stored due is not read: " + retrying)).isAfter(Instant.now().plus(Duration.ofDays(3000))), "its 10-year backoff: " + retrying.due());

            JobStatus queued = binomic.job(idOf("o-4")).status();
            assertEquals(JobState.QUEUED, queued.state());
            assertEquals(JobState.SCHEDULED, binomic.job(idOf("o-6")).status().state());
            assertEquals(JobState.QUEUED, binomic.job(PARTS, idOf("o-30")).status().state(), "found on partition 1");
            assertEquals(JobState.QUEUED, binomic.job(idOf("n-2")).status().state());
            JobStatus refused = binomic.job(idOf("o-12")).status();
            assertEquals(JobState.DEAD_LETTERED, refused.state());
            assertEquals(DeadLetterReason.NON_RETRYABLE, refused.deadLetterReason().orElseThrow());
        }
    }

    @Test
    void deadLettersListInspectReplayAndPurge() {
        load();
        try (Binomic binomic = client()) {
            List<DeadLetter> letters = binomic.deadLetters().list(DONE, DeadLetterFilter.all(), 10);
            assertEquals(5, letters.size(), letters.toString());
            DeadLetter maxAttempts = only(letters, DeadLetterReason.MAX_ATTEMPTS);
            assertEquals("fails", maxAttempts.task());
            assertEquals(idOf("o-9"), maxAttempts.message().orElseThrow().id());
            assertTrue(maxAttempts.failure().errorMessage().contains("no stock for o-9"), maxAttempts.failure().errorMessage());
            DeadLetter refused = only(letters, DeadLetterReason.NON_RETRYABLE);
            assertEquals("refuses", refused.task());
            assertTrue(refused.failure().errorMessage().contains("order o-12 is cancelled"), refused.failure().errorMessage());
            DeadLetter unknown = only(letters, DeadLetterReason.TASK_NOT_FOUND);
            assertEquals(UpgradeFixture.UNKNOWN_TASK, unknown.task());
            List<DeadLetter> undecodable = letters.stream().filter(l -> l.failure().reason() == DeadLetterReason.DECODE_ERROR).toList();
            assertEquals(2, undecodable.size(), "the payload that is not an Order and the entry that is not a message: " + letters);
            assertEquals(1, undecodable.stream().filter(l -> l.message().isEmpty()).count(), "the entry that is not a message keeps no message: " + undecodable);
            assertEquals(maxAttempts, binomic.deadLetters().find(DONE, maxAttempts.id()).orElseThrow(), "inspected by its id");

            binomic.startWorker();
            assertTrue(binomic.deadLetters().replayOne(DONE, maxAttempts.id()));
            assertTrue(binomic.deadLetters().replayOne(DONE, unknown.id()), "its task is known now");
            Await.until(Duration.ofSeconds(30), () -> runs.containsKey("o-9") && runs.containsKey("o-13"), () -> "ran so far: " + runs.keySet());
            Run replayed = only("o-9");
            assertEquals(new Order("o-9", 9, List.of()), replayed.argument());
            assertEquals(1, replayed.attempt());
            assertEquals(maxAttempts.id(), replayed.headers().get(Message.REPLAYED_FROM));
            assertEquals(new Order("o-13", 13, List.of()), only("o-13").argument());

            assertEquals(3, binomic.deadLetters().purge(DONE, DeadLetterFilter.all()));
            assertEquals(0, binomic.deadLetters().count(DONE, DeadLetterFilter.all()));
        }
    }

    @Test
    void storedClaimsStillHold() {
        load();
        long tick = Long.parseLong(value("binomic:{" + TICKS + "}:cron:every2s"));
        try (Broker broker = Brokers.redis(redis)) {
            broker.start(List.of(TICKS));
            Scheduler scheduler = Brokers.scheduler(broker);
            assertEquals(Instant.ofEpochMilli(tick), scheduler.lastFiredTick(TICKS, "every2s").orElseThrow(), "the stored tick record");
            Message message = Message.builder().id(UUID.randomUUID()).task("every2s").queue(TICKS).attempt(1).enqueuedAt(Instant.now())
                    .payload("null".getBytes(StandardCharsets.UTF_8)).build();
            assertEquals(TickResult.Outcome.ALREADY_FIRED, scheduler.fireTick("every2s", Instant.ofEpochMilli(tick), Instant.ofEpochMilli(tick).plusSeconds(2), message, Duration.ofMinutes(1)).outcome(),
                    "the stored tick is not fired again");
        }
        assertEquals(1L, redis.call("XLEN", "binomic:{" + TICKS + "}:stream"), "no second message for the stored tick");
        try (Binomic binomic = client()) {
            JobHandle<String> again = binomic.submit(UpgradeFixture.TRACKED, new Order("o-5b", 5, List.of()),
                    SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofDays(1)), UpgradeFixture.UNIQUE_KEY).build());
            assertEquals(idOf("o-5"), again.id(), "a duplicate of the stored job holding the unique key");
            JobHandle<String> debounced = binomic.submit(UpgradeFixture.LATER, new Order("o-11b", 11, List.of("again")),
                    SubmitOptions.builder().debounce(UpgradeFixture.DEBOUNCE_KEY).delay(Duration.ofHours(1)).build());
            assertEquals(idOf("o-11"), debounced.id(), "folded into the stored job waiting under the debounce key");
            assertStats(binomic.queueStats(A), 5, 2, 0);
        }
    }

    private static DeadLetter only(List<DeadLetter> letters, DeadLetterReason reason) {
        List<DeadLetter> of = letters.stream().filter(l -> l.failure().reason() == reason).toList();
        assertEquals(1, of.size(), "dead letters of reason " + reason + " in " + letters);
        return of.getFirst();
    }

    private static void assertStats(QueueStats stats, long ready, long delayed, long deadLetters) {
        assertEquals(List.of(ready, delayed, deadLetters), List.of(stats.ready(), stats.delayed(), stats.deadLetters()),
                "ready, delayed, dead letters of " + stats);
    }

    private Run only(String key) {
        List<Run> seen = runs.get(key);
        assertEquals(1, seen == null ? 0 : seen.size(), key + " ran " + seen);
        return seen.getFirst();
    }

    private String value(String key) {
        return keys.stream().filter(k -> k.get("key").asText().equals(key)).findFirst()
                .orElseThrow(() -> new AssertionError("no key " + key + " in " + KEYS)).get("value").asText();
    }

    /** The message id of the stored tick. */
    private UUID idOfTick() {
        for (JsonNode key : keys) {
            if (key.get("key").asText().equals("binomic:{" + TICKS + "}:stream")) {
                return UUID.fromString(key.get("entries").get(0).get("fields").get("id").asText());
            }
        }
        throw new AssertionError("no tick message in " + KEYS);
    }

    /** The job id of the only stored record of {@code task} in {@code state} (its message was acknowledged and trimmed). */
    private UUID idOfRecord(String task, String state) {
        List<String> ids = keys.stream().filter(k -> k.get("key").asText().contains(":job:")
                        && k.get("fields").get("task").asText().equals(task) && k.get("fields").get("state").asText().equals(state))
                .map(k -> k.get("key").asText().substring(k.get("key").asText().lastIndexOf(':') + 1)).toList();
        assertEquals(1, ids.size(), "records of " + task + " in state " + state + ": " + ids);
        return UUID.fromString(ids.getFirst());
    }

    /** The job id of the stored message whose argument has id {@code argument} (an order's or a note's). */
    private UUID idOf(String argument) {
        List<String> payloads = List.of("\"id\":\"" + argument + "\"", "\"text\":\"" + argument + "\"");
        for (JsonNode key : keys) {
            for (JsonNode fields : messagesOf(key)) {
                if (fields.has("payload") && payloads.stream().anyMatch(fields.get("payload").asText()::contains)) {
                    return UUID.fromString(fields.get("id").asText());
                }
            }
        }
        throw new AssertionError("no stored message of " + argument + " in " + KEYS);
    }

    private static List<JsonNode> messagesOf(JsonNode key) {
        return switch (key.get("type").asText()) {
            case "stream" -> key.get("entries").valueStream().map(e -> e.get("fields")).toList();
            case "zset" -> key.get("members").valueStream().map(m -> parse(m.get("member").asText())).toList();
            default -> new ArrayList<>();
        };
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
