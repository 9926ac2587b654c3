package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.spi.Message;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Messages prepared ahead and stored later, on the embedded broker: each stored once per id, as a relay needs. */
class PreparedSubmitTest {

    @Test
    void aPreparedMessageStoredTwiceRunsOnceUnderItsOwnId() throws Exception {
        Task<String, Void> t = Task.builder("prepared", String.class).queue("prep").build();
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().queues("prep").concurrency(2).build()).build();
        try (Binomic binomic = Binomic.builder().config(config).handle(t, s -> {
            runs.computeIfAbsent(s, k -> new AtomicInteger()).incrementAndGet();
            return null;
        }).build().start()) {
            Message a = binomic.prepare(t, "a", SubmitOptions.NONE);
            Message b = binomic.prepare(t, "b", SubmitOptions.builder().priority(8).build());
            assertEquals(8, b.priority(), "the priority is set at prepare: " + b);
            assertEquals(List.of(a.id(), b.id()), binomic.submitPrepared(List.of(a, b), null, Duration.ofMinutes(1)));
            assertEquals(Collections.singletonList(null), binomic.submitPrepared(List.of(a), null, Duration.ofMinutes(1)),
                    "a second store is a duplicate: null, nothing stored");
            binomic.startWorker();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (runs.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            Thread.sleep(300);
        }
        assertEquals(1, runs.get("a").get());
        assertEquals(1, runs.get("b").get());
    }

    @Test
    void aDuplicateOfAUniqueJobAnswersTheEarlierId() {
        Task<String, Void> t = Task.builder("unique-prepared", String.class).queue("prep2").build();
        try (Binomic binomic = Binomic.builder().task(t).build().start()) {
            SubmitOptions once = SubmitOptions.builder().unique(Uniqueness.forPeriod(Duration.ofMinutes(1)), "k").build();
            Message first = binomic.prepare(t, "x", once);
            Message second = binomic.prepare(t, "y", once);
            List<UUID> ids = binomic.submitPrepared(List.of(first, second), null, Duration.ofMinutes(1));
            assertEquals(List.of(first.id(), first.id()), ids);
        }
    }

    @Test
    void debounceAndPartitionKeysAreRefusedAtPrepare() {
        Task<String, Void> t = Task.builder("refused-prepared", String.class).build();
        try (Binomic binomic = Binomic.builder().task(t).build().start()) {
            IllegalArgumentException debounce = assertThrows(IllegalArgumentException.class, () -> binomic.prepare(t, "x",
                    SubmitOptions.builder().debounce("k").delay(Duration.ofSeconds(1)).build()));
            assertTrue(debounce.getMessage().contains("debounced job replaces"), debounce.getMessage());
            IllegalArgumentException partition = assertThrows(IllegalArgumentException.class, () -> binomic.prepare(t, "x",
                    SubmitOptions.builder().partitionKey("p").build()));
            assertTrue(partition.getMessage().contains("no partition key"), partition.getMessage());
        }
    }
}
