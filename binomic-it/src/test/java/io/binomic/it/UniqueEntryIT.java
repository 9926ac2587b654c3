package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A unique job's stream entry on a real Redis is what a plain submit writes plus its {@code headers}
 * (the claim), whichever script writes it: an untracked job's script names the fields itself and is
 * sent only their values, a tracked job's is sent the names too. Workers and stored entries read one form.
 */
class UniqueEntryIT {
    record Item(int n) { }

    @Test
    void aUniqueJobsEntryHasAPlainJobsFieldsAndItsClaimWhicheverScriptWritesIt() {
        RedisServer redis = RedisServer.shared();
        String queue = "unique-entry-" + System.nanoTime();
        Task<Item, Void> plain = Task.builder("plain", Item.class).queue(queue).build();
        Task<Item, Void> untracked = Task.builder("untracked", Item.class).queue(queue)
                .unique(Uniqueness.whileQueued(Duration.ofMinutes(5)), item -> "u" + item.n()).build();
        Task<Item, String> tracked = Task.builder("tracked", Item.class, String.class).queue(queue)
                .unique(Uniqueness.whileQueued(Duration.ofMinutes(5)), item -> "t" + item.n()).build();
        try (Binomic producer = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).build().start()) {
            JobHandle<Void> p = producer.submit(plain, new Item(1));
            JobHandle<Void> u = producer.submit(untracked, new Item(2));
            JobHandle<String> t = producer.submit(tracked, new Item(3));
            List<JobHandle<Void>> all = producer.submitAll(untracked, List.of(new Item(4), new Item(2)));
            assertEquals(u.id(), all.get(1).id(), "a duplicate gets the first job");
            assertEquals(1L, redis.call("EXISTS", "binomic:{" + queue + "}:job:" + t.id()), "the tracked job has its record");
            assertEquals(0L, redis.call("EXISTS", "binomic:{" + queue + "}:job:" + u.id()), "the untracked job has none");

            List<Map<String, String>> entries = entries(redis, queue);
            assertEquals(4, entries.size(), entries.toString());
            List<String> plainNames = List.copyOf(entries.get(0).keySet());
            List<String> uniqueNames = new ArrayList<>(plainNames);
            uniqueNames.add("headers");
            assertEquals(List.of("id", "task", "queue", "attempt", "enqueuedAt", "payload"), plainNames);
            List<String> ids = List.of(p.id().toString(), u.id().toString(), t.id().toString(), all.getFirst().id().toString());
            List<String> tasks = List.of("plain", "untracked", "tracked", "untracked");
            List<String> keys = List.of("", "u2", "t3", "u4");
            for (int i = 0; i < entries.size(); i++) {
                Map<String, String> e = entries.get(i);
                assertEquals(i == 0 ? plainNames : uniqueNames, List.copyOf(e.keySet()), "entry " + i + ": " + e);
                assertEquals(ids.get(i), e.get("id"), e.toString());
                assertEquals(tasks.get(i), e.get("task"), e.toString());
                assertEquals(queue, e.get("queue"), e.toString());
                assertEquals("1", e.get("attempt"), e.toString());
                assertTrue(e.get("enqueuedAt").matches("\\d{13}"), e.toString());
                assertEquals("{\"n\":" + (i + 1) + "}", e.get("payload"), e.toString());
                if (i > 0) {
                    assertTrue(e.get("headers").contains("\"unique\":\"W 300000 " + keys.get(i) + "\""), e.toString());
                    assertEquals(ids.get(i), redis.call("GET", "binomic:{" + queue + "}:unique:" + tasks.get(i) + ":" + keys.get(i)),
                            "the key holds the job that was enqueued");
                }
            }
        }
    }

    @Test
    void aUniqueJobsPayloadOfAnyLengthIsStoredAsSubmitted() {
        RedisServer redis = RedisServer.shared();
        String queue = "unique-lengths-" + System.nanoTime();
        Task<String, Void> task = Task.builder("text", String.class).queue(queue)
                .unique(Uniqueness.whileQueued(Duration.ofMinutes(5)), text -> Integer.toString(text.length())).build();
        // payloads (JSON strings, two bytes of quotes) empty, short, either side of the size up to which
        // Redis keeps a string in its object (44 bytes), long, and of multi-byte characters
        List<String> texts = new ArrayList<>();
        for (int bytes : List.of(0, 1, 42, 43, 1_000, 100_000)) {
            texts.add("x".repeat(bytes));
        }
        texts.add("é€😀 ".repeat(3_000));
        try (Binomic producer = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).build().start()) {
            for (String text : texts) {
                producer.submit(task, text);
            }
            List<Map<String, String>> entries = entries(redis, queue);
            assertEquals(texts.size(), entries.size());
            for (int i = 0; i < texts.size(); i++) {
                assertEquals("\"" + texts.get(i) + "\"", entries.get(i).get("payload"), "text " + i);
                assertEquals(List.of("id", "task", "queue", "attempt", "enqueuedAt", "payload", "headers"),
                        List.copyOf(entries.get(i).keySet()));
            }
        }
    }

    /** The queue's stream entries, each as its fields in order. */
    private static List<Map<String, String>> entries(RedisServer redis, String queue) {
        List<Map<String, String>> entries = new ArrayList<>();
        for (Object entry : (List<?>) redis.call("XRANGE", "binomic:{" + queue + "}:stream", "-", "+")) {
            List<?> fields = (List<?>) ((List<?>) entry).get(1);
            Map<String, String> map = new LinkedHashMap<>();
            for (int i = 0; i < fields.size(); i += 2) {
                map.put((String) fields.get(i), (String) fields.get(i + 1));
            }
            entries.add(map);
        }
        return entries;
    }
}
