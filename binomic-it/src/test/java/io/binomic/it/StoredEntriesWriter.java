package io.binomic.it;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.NonRetryableException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TraceContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Writes the entries a release leaves in users' Redis, for {@link StoredEntriesCompatIT}: run it on
 * the code of a release and commit its output as {@code stored-entries-<version>.jsonl}. Queue
 * {@code stored} keeps what waits (plain, tracked, prioritised, traced, unique, untyped and delayed
 * messages); queue {@code stored-done} what a worker left behind (a result, a dead letter, a retry
 * waiting for its backoff).
 *
 * <p>Not one of the suite's tests (its name ends in neither Test nor IT): {@code ./mvnw -B verify -pl
 * binomic-it -am -Dtest=StoredEntriesWriter -Dsurefire.failIfNoSpecifiedTests=false} writes
 * {@code binomic-it/target/stored-entries.jsonl}.
 */
final class StoredEntriesWriter {
    /** An argument with fields of several JSON types. */
    record Order(String id, int quantity, List<String> tags) { }

    static final String WAITING = "stored";
    static final String DONE = "stored-done";
    static final TraceContext TRACE = TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=a");

    static final Task<Order, Void> PLAIN = Task.builder("plain", Order.class, Void.class).queue(WAITING).build();
    static final Task<Order, String> TRACKED = Task.builder("tracked", Order.class, String.class).queue(WAITING).build();
    static final Task<Order, String> LATER = Task.builder("later", Order.class, String.class).queue(WAITING).build();
    static final Task<Order, String> SUCCEEDS = Task.builder("succeeds", Order.class, String.class).queue(DONE).build();
    static final Task<Order, String> FAILS = Task.builder("fails", Order.class, String.class).queue(DONE).maxAttempts(1).build();
    static final Task<Order, String> RETRIES = Task.builder("retries", Order.class, String.class).queue(DONE).maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofDays(3650))).build();

    @Test
    void writeTheEntriesOfThisVersion() throws Exception {
        Path out = Path.of("target", "stored-entries.jsonl");
        try (RedisServer redis = RedisServer.startNew()) {
            write(redis);
            try (Writer writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
                StoredEntries.dump(redis, writer);
            }
        }
        System.out.println("wrote " + out.toAbsolutePath());
    }

    private static void write(RedisServer redis) throws Exception {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(DONE).pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(5)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(SUCCEEDS, o -> "shipped " + o.id())
                .handle(FAILS, o -> {
                    throw new NonRetryableException("no stock for " + o.id());
                })
                .handle(RETRIES, o -> {
                    throw new IllegalStateException("partner down for " + o.id());
                })
                .handle(PLAIN, o -> null).handle(TRACKED, o -> "t").handle(LATER, o -> "l")
                .build().start()) {
            binomic.submit(PLAIN, new Order("o-1", 1, List.of("a", "b")), Map.of("tenant", "acme"));
            binomic.submit(PLAIN, new Order("o-2", 2, List.of()), SubmitOptions.builder().priority(9).build());
            binomic.submit(PLAIN, new Order("o-3", 3, List.of("low")), SubmitOptions.builder().priority(1).build());
            binomic.submit(TRACKED, new Order("o-4", 4, List.of("traced")),
                    SubmitOptions.builder().traceContext(TRACE).headers(Map.of("tenant", "globex")).build());
            binomic.submit(TRACKED, new Order("o-5", 5, List.of("unique")),
                    SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofDays(3650)), "order-5").build());
            binomic.submit(LATER, new Order("o-6", 6, List.of("delayed")), SubmitOptions.builder().delay(Duration.ofSeconds(1)).build());
            binomic.submitJson(WAITING, "plain", "{\"id\":\"o-7\",\"quantity\":7,\"tags\":[\"json\"]}");

            Worker worker = binomic.startWorker();
            JobHandle<String> shipped = binomic.submit(SUCCEEDS, new Order("o-8", 8, List.of()));
            shipped.await(Duration.ofSeconds(30));
            binomic.submit(FAILS, new Order("o-9", 9, List.of()));
            binomic.submit(RETRIES, new Order("o-10", 10, List.of()));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while ((binomic.queueStats(DONE).deadLetters() < 1 || binomic.queueStats(DONE).delayed() < 1) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            worker.close();
        }
    }
}
