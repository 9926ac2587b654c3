package io.binomic.it;

import static io.binomic.it.UpgradeFixture.A;
import static io.binomic.it.UpgradeFixture.B;
import static io.binomic.it.UpgradeFixture.DONE;
import static io.binomic.it.UpgradeFixture.LIMITED;
import static io.binomic.it.UpgradeFixture.PARTS;
import static io.binomic.it.UpgradeFixture.PAUSED;
import static io.binomic.it.UpgradeFixture.TICKS;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.NonRetryableException;
import io.binomic.api.QueueLimits;
import io.binomic.api.SubmitOptions;
import io.binomic.api.TraceContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.it.UpgradeFixture.Note;
import io.binomic.it.UpgradeFixture.Order;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Writes the upgrade fixture: what a release leaves in users' Redis, as text, for
 * {@link UpgradeFromStoredEntriesIT} to load into a fresh Redis and read with later code. Run it by
 * hand on the commit of a release (test code of that commit or this class copied onto it; the main
 * code must be the release's):
 *
 * <pre>
 * [UPGRADE_COMMIT=dce0933] ./mvnw -B -o verify -pl binomic-it -am -Dtest=UpgradeFixtureWriter -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * <p>The fixture is named after the commit in environment variable {@code UPGRADE_COMMIT} (default
 * {@code HEAD}); the writer refuses to run when the main code of binomic-api, binomic-core or
 * binomic-redis differs from that commit's. It writes
 * {@code binomic-it/target/upgrade/<commit>/keys.jsonl} (every {@code binomic:*} key, one JSON object
 * a line: key, type, remaining time to live, content; see {@link StoredEntries}) and
 * {@code manifest.json} (the commit, the Redis version, and what each key is). Commit the directory
 * as {@code binomic-it/src/test/resources/upgrade/<commit>/}. Its name ends in neither Test nor IT,
 * so the suite does not run it.
 *
 * <p>What it leaves, queue by queue ({@link UpgradeFixture}; the fixture's README has the table): on
 * {@code up-a} waiting jobs (plain with a header, priority 9, traced, unique, JSON-submitted,
 * delayed 1 h, debounced 1 h); on {@code up-b} two ready jobs and a paused task's job parked in the
 * delayed set; on {@code up-done} a succeeded job's record, a retry waiting for its 10-year backoff,
 * and dead letters of every reason (MAX_ATTEMPTS, NON_RETRYABLE, TASK_NOT_FOUND, and DECODE_ERROR
 * twice: a payload that is not the argument type, and a stream entry that is not a message); on
 * {@code up-limited} the queue's rate limit and two ready jobs of a task with a rate limit of its
 * own; {@code up-paused} paused with a job in it; on {@code up-ticks} an interval task's tick record
 * and its message; {@code up-parts} of two partitions with a job on each; and the consumer groups,
 * consumers-seen and activity hashes the worker wrote.
 */
final class UpgradeFixtureWriter {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final TraceContext TRACE = TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=a");

    @Test
    void writeTheFixtureOfThisVersion() throws Exception {
        String commit = git("rev-parse", "--short=7", System.getenv().getOrDefault("UPGRADE_COMMIT", "HEAD"));
        String differs = git("diff", "--name-only", commit, "--", ":/binomic-api/src/main", ":/binomic-core/src/main", ":/binomic-redis/src/main");
        if (!differs.isEmpty()) {
            throw new IllegalStateException("the main code differs from commit " + commit + " (" + differs.lines().toList()
                    + "): a fixture must be written by the code of the release it is named after; check out that commit's"
                    + " main code, or name the commit whose code this is in environment variable UPGRADE_COMMIT");
        }
        Path dir = Path.of("target", "upgrade", commit);
        Files.createDirectories(dir);
        try (RedisServer redis = RedisServer.startNew()) {
            write(redis);
            StringWriter keys = new StringWriter();
            StoredEntries.dump(redis, keys);
            Files.writeString(dir.resolve("keys.jsonl"), keys.toString(), StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("manifest.json"), manifest(redis, commit, keys.toString()) + "\n", StandardCharsets.UTF_8);
        }
        System.out.println("wrote " + dir.toAbsolutePath());
    }

    private static void write(RedisServer redis) throws Exception {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(DONE, LIMITED, B).pollTimeout(Duration.ofMillis(100))
                        .shutdownGrace(Duration.ofSeconds(5)).build())
                .build();
        try (Binomic ticks = Binomic.builder().config(config).handle(UpgradeFixture.TICK, () -> { }).build().start()) {
            await("the first tick of " + UpgradeFixture.TICK.name(), () -> ticks.queueStats(TICKS).ready() > 0
                    && redis.call("EXISTS", "binomic:{" + TICKS + "}:cron:every2s").equals(1L));
        }
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(UpgradeFixture.SUCCEEDS, o -> "shipped " + o.id())
                .handle(UpgradeFixture.FAILS, o -> {
                    throw new IllegalStateException("no stock for " + o.id());
                })
                .handle(UpgradeFixture.REFUSES, o -> {
                    throw new NonRetryableException("order " + o.id() + " is cancelled");
                })
                .handle(UpgradeFixture.RETRIES, o -> {
                    throw new IllegalStateException("partner down for " + o.id());
                })
                .handle(UpgradeFixture.THROTTLED, o -> "throttled " + o.id())
                .handle(UpgradeFixture.NOTE, n -> "noted " + n.text())
                .handle(UpgradeFixture.HELD, n -> "held " + n.text())
                .handle(UpgradeFixture.PLAIN, o -> null).handle(UpgradeFixture.TRACKED, o -> "t").handle(UpgradeFixture.LATER, o -> "l")
                .handle(UpgradeFixture.IDLE, o -> "i").handle(UpgradeFixture.SPREAD, o -> "s")
                .build().start()) {
            binomic.queues().setLimits(LIMITED, QueueLimits.builder().rateLimit(UpgradeFixture.QUEUE_RATE).build());
            binomic.queues().setPartitions(PARTS, 2);
            binomic.queues().pause(PAUSED);
            binomic.queues().pauseTask(B, UpgradeFixture.HELD.name());

            binomic.submit(UpgradeFixture.PLAIN, new Order("o-1", 1, List.of("a", "b")), Map.of("tenant", "acme"));
            binomic.submit(UpgradeFixture.PLAIN, new Order("o-2", 2, List.of()), SubmitOptions.builder().priority(9).build());
            binomic.submit(UpgradeFixture.TRACKED, new Order("o-4", 4, List.of("traced")),
                    SubmitOptions.builder().traceContext(TRACE).headers(Map.of("tenant", "globex")).build());
            binomic.submit(UpgradeFixture.TRACKED, new Order("o-5", 5, List.of("unique")),
                    SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofDays(3650)), UpgradeFixture.UNIQUE_KEY).build());
            binomic.submit(UpgradeFixture.LATER, new Order("o-6", 6, List.of("delayed")), SubmitOptions.builder().delay(Duration.ofHours(1)).build());
            binomic.submitJson(A, "plain", "{\"id\":\"o-7\",\"quantity\":7,\"tags\":[\"json\"]}");
            binomic.submit(UpgradeFixture.LATER, new Order("o-11", 11, List.of("debounced")),
                    SubmitOptions.builder().debounce(UpgradeFixture.DEBOUNCE_KEY).delay(Duration.ofHours(1)).build());
            binomic.submit(UpgradeFixture.IDLE, new Order("o-20", 20, List.of()));
            binomic.submit(UpgradeFixture.SPREAD, new Order("o-30", 30, List.of()));
            binomic.submit(UpgradeFixture.SPREAD, new Order("o-31", 31, List.of()));

            Worker worker = binomic.startWorker();
            binomic.submit(UpgradeFixture.HELD, new Note("n-1"));
            await("the paused task's job parked", () -> binomic.queueStats(B).delayed() == 1);
            JobHandle<String> shipped = binomic.submit(UpgradeFixture.SUCCEEDS, new Order("o-8", 8, List.of()));
            shipped.await(Duration.ofSeconds(30));
            binomic.submit(UpgradeFixture.FAILS, new Order("o-9", 9, List.of()));
            binomic.submit(UpgradeFixture.RETRIES, new Order("o-10", 10, List.of()));
            binomic.submitJson(DONE, "succeeds", "\"not an order\"");
            binomic.submit(UpgradeFixture.REFUSES, new Order("o-12", 12, List.of()));
            binomic.submitJson(DONE, UpgradeFixture.UNKNOWN_TASK, "{\"id\":\"o-13\",\"quantity\":13,\"tags\":[]}");
            redis.call("XADD", "binomic:{" + DONE + "}:stream", "*", "note", "an entry that is not a Binomic message");
            List<JobHandle<String>> throttled = List.of(binomic.submit(UpgradeFixture.THROTTLED, new Order("o-40", 40, List.of())),
                    binomic.submit(UpgradeFixture.THROTTLED, new Order("o-41", 41, List.of())));
            for (JobHandle<String> job : throttled) {
                job.await(Duration.ofSeconds(30));
            }
            await("five dead letters and the retry", () -> binomic.queueStats(DONE).deadLetters() == 5 && binomic.queueStats(DONE).delayed() == 1);
            worker.close();

            binomic.submit(UpgradeFixture.NOTE, new Note("n-2"));
            binomic.submit(UpgradeFixture.NOTE, new Note("n-3"));
            binomic.submit(UpgradeFixture.THROTTLED, new Order("o-42", 42, List.of()));
            binomic.submit(UpgradeFixture.THROTTLED, new Order("o-43", 43, List.of()));
        }
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("waited 30 s for " + what);
            }
            Thread.sleep(50);
        }
    }

    private static String manifest(RedisServer redis, String commit, String keys) throws IOException {
        ObjectNode manifest = JSON.createObjectNode();
        manifest.put("commit", commit);
        manifest.put("writtenAt", Instant.now().toString());
        String info = (String) redis.call("INFO", "server");
        manifest.put("redisVersion", info.lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("?").substring("redis_version:".length()).strip());
        manifest.put("writer", "binomic-it/src/test/java/io/binomic/it/UpgradeFixtureWriter.java");
        ObjectNode described = manifest.putObject("keys");
        for (String line : keys.lines().toList()) {
            JsonNode key = JSON.readTree(line);
            described.put(key.get("key").asText(), describe(key));
        }
        return JSON.writeValueAsString(manifest);
    }

    /** What a key is, in words, from its name (and a job record's task and state). */
    static String describe(JsonNode key) {
        String name = key.get("key").asText();
        String queue = name.substring(name.indexOf('{') + 1, name.indexOf('}'));
        String rest = name.substring(name.indexOf('}') + 2);
        String what = rest.startsWith("job:") ? "job record, task " + key.get("fields").path("task").asText() + ", state "
                + key.get("fields").path("state").asText()
                : rest.equals("stream") ? "stream of ready and pending messages (priority 5) and its group"
                : rest.startsWith("stream:p") ? "stream of priority " + rest.substring("stream:p".length()) + " and its group"
                : rest.equals("stream:levels") ? "priorities other than 5 used on the queue"
                : rest.equals("delayed") ? "delayed set: DELAY jobs, debounced jobs, retries waiting for their backoff, parked paused jobs"
                : rest.equals("dlq") ? "dead letters"
                : rest.equals("consumers-seen") ? "when each worker last said it is alive"
                : rest.startsWith("activity:") ? "what the workers did in one minute"
                : rest.startsWith("cron:") ? "last fired tick of periodic task " + rest.substring("cron:".length())
                : rest.startsWith("unique:") ? "unique claim: the id of the job holding the key"
                : rest.startsWith("debounce:") ? "debounce key: the delayed-set member of the job waiting under it"
                : rest.equals("paused") ? "what is paused: task names, * for the whole queue"
                : rest.equals("limits") ? "the queue's own limits"
                : rest.startsWith("rate:") ? "rate limit state (GCRA, epoch microseconds)"
                : rest.equals("partitions") ? "partition count and highest partition"
                : rest.equals("held") || rest.startsWith("slots:") || rest.startsWith("wait:") ? "concurrency limit bookkeeping"
                : "not described: add it to UpgradeFixtureWriter.describe";
        return "queue " + queue + ": " + what;
    }

    private static String git(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("git"));
        command.addAll(List.of(args));
        Process git = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (git.waitFor() != 0) {
            throw new IllegalStateException("git " + String.join(" ", args) + " failed: " + out);
        }
        return out;
    }

}
