package io.binomic.it;

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
import io.binomic.api.QueueStats;
import io.binomic.api.SubmitOptions;
import io.binomic.api.TaskContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.core.Binomic;
import io.binomic.it.StoredEntriesWriter.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the first release left in users' Redis (written by {@link StoredEntriesWriter} on commit
 * 5b520e6 and kept as a resource) is read by this code: waiting messages run with their arguments,
 * headers, trace context and priority streams; results, dead letters and retries waiting for their
 * backoff keep their meaning; a unique key still holds. Each test starts from the stored entries
 * in a Redis of its own.
 */
class StoredEntriesCompatIT {
    private static final String STORED = "stored-entries-5b520e6.jsonl";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static RedisServer redis;
    private static List<JsonNode> keys;
    private final Map<String, CopyOnWriteArrayList<Run>> runs = new ConcurrentHashMap<>();

    /** What a handler saw. */
    record Run(String task, Order order, int attempt, Map<String, String> headers, TaskContext context) { }

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.startNew();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    private Binomic restoredClient() {
        redis.call("FLUSHALL");
        keys = StoredEntries.restore(redis, STORED);
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(StoredEntriesWriter.WAITING, StoredEntriesWriter.DONE).pollTimeout(Duration.ofMillis(100))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        return Binomic.builder().config(config)
                .handle(StoredEntriesWriter.PLAIN, o -> {
                    record("plain", o);
                    return null;
                })
                .handle(StoredEntriesWriter.TRACKED, o -> record("tracked", o))
                .handle(StoredEntriesWriter.LATER, o -> record("later", o))
                .handle(StoredEntriesWriter.SUCCEEDS, o -> record("succeeds", o))
                .handle(StoredEntriesWriter.FAILS, o -> record("fails", o))
                .handle(StoredEntriesWriter.RETRIES, o -> record("retries", o))
                .build().start();
    }

    private String record(String task, Order order) {
        TaskContext context = TaskContext.current();
        runs.computeIfAbsent(order.id(), k -> new CopyOnWriteArrayList<>())
                .add(new Run(task, order, context.attempt(), Map.copyOf(context.headers()), context));
        return task + " " + order.id();
    }

    @Test
    void waitingMessagesRunOnceWithTheirArgumentsHeadersAndTraceContext() {
        try (Binomic binomic = restoredClient()) {
            QueueStats waiting = binomic.queueStats(StoredEntriesWriter.WAITING);
            assertEquals(6, waiting.ready(), "four on the default stream, one on each priority stream: " + waiting);
            assertEquals(1, waiting.delayed(), waiting.toString());

            binomic.startWorker();
            Await.until(Duration.ofSeconds(30), () -> runs.keySet().containsAll(List.of("o-1", "o-2", "o-3", "o-4", "o-5", "o-6", "o-7")),
                    () -> "runs so far: " + runs.keySet());

            assertEquals(new Order("o-1", 1, List.of("a", "b")), only("o-1").order());
            assertEquals("acme", only("o-1").headers().get("tenant"));
            assertEquals(new Order("o-2", 2, List.of()), only("o-2").order());
            assertEquals(new Order("o-3", 3, List.of("low")), only("o-3").order());
            Run traced = only("o-4");
            assertEquals("globex", traced.headers().get("tenant"));
            assertEquals(StoredEntriesWriter.TRACE, traced.context().traceContext().orElseThrow());
            assertEquals("later", only("o-6").task(), "the delayed message, long due, is moved and run");
            assertEquals(new Order("o-7", 7, List.of("json")), only("o-7").order(), "submitted as JSON");
            for (String order : List.of("o-1", "o-2", "o-3", "o-4", "o-5", "o-6", "o-7")) {
                assertEquals(1, only(order).attempt(), order);
            }

            JobHandle<String> tracked = binomic.job(StoredEntriesWriter.WAITING, idOf("o-4"));
            assertEquals("\"tracked o-4\"", tracked.await(Duration.ofSeconds(10)));
            assertEquals(StoredEntriesWriter.TRACE, tracked.status().traceContext().orElseThrow());
            Await.until(Duration.ofSeconds(10), () -> binomic.queueStats(StoredEntriesWriter.WAITING).pending() == 0,
                    () -> "settled: " + binomic.queueStats(StoredEntriesWriter.WAITING));
            assertFalse(runs.containsKey("o-8") || runs.containsKey("o-9") || runs.containsKey("o-10"),
                    "what had ended or waits for its backoff does not run: " + runs.keySet());
        }
    }

    @Test
    void endedJobsKeepTheirResultAndTheRetryKeepsItsBackoff() {
        try (Binomic binomic = restoredClient()) {
            JobHandle<String> shipped = binomic.job(StoredEntriesWriter.SUCCEEDS, idOf("o-8"));
            assertEquals("shipped o-8", shipped.await(Duration.ofSeconds(5)));
            JobStatus status = shipped.status();
            assertEquals(JobState.SUCCEEDED, status.state());
            assertEquals(1, status.attempts().size());

            JobStatus dead = binomic.job(StoredEntriesWriter.DONE, idOf("o-9")).status();
            assertEquals(JobState.DEAD_LETTERED, dead.state());
            assertEquals(DeadLetterReason.NON_RETRYABLE, dead.deadLetterReason().orElseThrow());

            JobHandle<String> retrying = binomic.job(StoredEntriesWriter.DONE, idOf("o-10"));
            assertEquals(JobState.RETRYING, retrying.status().state());
            assertTrue(retrying.status().due().orElseThrow().isAfter(Instant.now().plus(Duration.ofDays(3000))),
                    "due after its ten-year backoff: " + retrying.status().due());
            assertEquals(1, binomic.queueStats(StoredEntriesWriter.DONE).delayed());
            assertEquals(JobHandle.CancelOutcome.CANCELLED, retrying.cancel());
            assertEquals(JobState.CANCELLED, retrying.status().state());
        }
    }

    @Test
    void aStoredDeadLetterIsListedAndReplayedAsAFreshFirstAttempt() {
        try (Binomic binomic = restoredClient()) {
            List<DeadLetter> letters = binomic.deadLetters().list(StoredEntriesWriter.DONE, DeadLetterFilter.all(), 10);
            assertEquals(1, letters.size(), letters.toString());
            DeadLetter letter = letters.getFirst();
            assertEquals("fails", letter.task());
            assertEquals(DeadLetterReason.NON_RETRYABLE, letter.failure().reason());
            assertTrue(letter.failure().errorMessage().contains("no stock for o-9"), letter.failure().errorMessage());
            Message message = letter.message().orElseThrow();
            assertEquals(idOf("o-9"), message.id());

            binomic.startWorker();
            assertEquals(1, binomic.deadLetters().replay(StoredEntriesWriter.DONE, DeadLetterFilter.all()));
            Await.until(Duration.ofSeconds(30), () -> runs.containsKey("o-9"), () -> "runs so far: " + runs.keySet());
            Run replayed = only("o-9");
            assertEquals(new Order("o-9", 9, List.of()), replayed.order());
            assertEquals(1, replayed.attempt());
            assertEquals(letter.id(), replayed.headers().get(Message.REPLAYED_FROM));
        }
    }

    @Test
    void aStoredUniqueKeyStillHoldsItsJob() {
        try (Binomic binomic = restoredClient()) {
            JobHandle<String> again = binomic.submit(StoredEntriesWriter.TRACKED, new Order("o-5b", 5, List.of()),
                    SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofDays(1)), "order-5").build());
            assertEquals(idOf("o-5"), again.id(), "a duplicate of the stored job holding key order-5");
            assertEquals(6, binomic.queueStats(StoredEntriesWriter.WAITING).ready(), "nothing was enqueued");
        }
    }

    /**
     * The new code writes each stored message back with the fields it was stored with: every field
     * byte for byte, and {@code headers} as the same JSON object (the first release wrote its
     * members in the hash order of an immutable map, which changes from one JVM to the next, so no
     * reader depends on it).
     */
    @Test
    void eachStoredMessageIsWrittenBackWithTheFieldsItWasStoredWith() throws Exception {
        redis.call("FLUSHALL");
        keys = StoredEntries.restore(redis, STORED);
        Map<String, JsonNode> stored = new HashMap<>();
        List<String> storedEntryIds = new ArrayList<>();
        for (JsonNode key : keys) {
            if (key.get("type").asText().equals("stream") && key.get("key").asText().startsWith("binomic:{" + StoredEntriesWriter.WAITING + "}:stream")) {
                key.get("entries").forEach(e -> {
                    stored.put(e.get("fields").get("id").asText(), e.get("fields"));
                    storedEntryIds.add(e.get("id").asText());
                });
            }
        }
        assertEquals(6, stored.size(), "the ready messages, on the default and the priority streams");
        List<Message> read = new ArrayList<>();
        try (Broker broker = Brokers.redis(redis)) {
            broker.start(List.of(StoredEntriesWriter.WAITING));
            for (int i = 0; i < 20 && read.size() < stored.size(); i++) {
                broker.fetch(List.of(StoredEntriesWriter.WAITING), "compat", 50, Duration.ofMillis(100)).forEach(d -> d.message()
                        .filter(m -> stored.containsKey(m.id().toString())).ifPresent(read::add));
            }
            assertEquals(stored.size(), read.size(), "read: " + read);
            read.forEach(broker::enqueue);
        }
        int compared = 0;
        for (String stream : List.of("", ":p1", ":p9")) {
            List<?> entries = (List<?>) redis.call("XRANGE", "binomic:{" + StoredEntriesWriter.WAITING + "}:stream" + stream, "-", "+");
            Map<String, String> written = new LinkedHashMap<>();
            for (Object entry : entries) {
                List<?> flat = (List<?>) ((List<?>) entry).get(1);
                written.clear();
                for (int i = 0; i < flat.size(); i += 2) {
                    written.put((String) flat.get(i), (String) flat.get(i + 1));
                }
                JsonNode original = stored.get(written.get("id"));
                if (storedEntryIds.contains((String) ((List<?>) entry).get(0)) || original == null) {
                    continue; // a stored entry itself, or the delayed message the fetch moved
                }
                assertEquals(fieldNames(original), List.copyOf(written.keySet()), "the same fields in the same order: " + written);
                for (Map.Entry<String, String> field : written.entrySet()) {
                    String was = original.get(field.getKey()).asText();
                    if (field.getKey().equals("headers")) {
                        assertEquals(JSON.readTree(was), JSON.readTree(field.getValue()), "headers of " + written);
                    } else {
                        assertEquals(was, field.getValue(), field.getKey() + " of " + written);
                    }
                }
                compared++;
            }
        }
        assertEquals(stored.size(), compared);
    }

    private static List<String> fieldNames(JsonNode fields) {
        List<String> names = new ArrayList<>();
        fields.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private Run only(String order) {
        List<Run> seen = runs.get(order);
        assertEquals(1, seen == null ? 0 : seen.size(), order + " ran " + seen);
        return seen.getFirst();
    }

    /** The job id of the stored message whose argument is order {@code order}. */
    private static UUID idOf(String order) {
        for (JsonNode key : keys) {
            for (JsonNode fields : messagesOf(key)) {
                if (fields.has("payload") && fields.get("payload").asText().contains("\"id\":\"" + order + "\"")) {
                    return UUID.fromString(fields.get("id").asText());
                }
            }
        }
        throw new AssertionError("no stored message of order " + order + " in " + STORED);
    }

    private static List<JsonNode> messagesOf(JsonNode key) {
        return switch (key.get("type").asText()) {
            case "stream" -> key.get("entries").valueStream().map(e -> e.get("fields")).toList();
            case "zset" -> key.get("members").valueStream().map(m -> parse(m.get("member").asText())).toList();
            default -> List.of();
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
