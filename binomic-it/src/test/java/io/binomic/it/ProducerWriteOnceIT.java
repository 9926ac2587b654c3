package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A submit that throws has reached Redis at most once, and never after it threw: a submit whose
 * reply Redis never sent (frozen) is in the stream once when Redis resumes, however long the
 * freeze, and a submit that found Redis stopped is not enqueued when Redis comes back, as its
 * exception says. Resent writes would otherwise queue up in the open socket of a frozen server
 * and all run at the thaw, and retries left running after the submit threw would enqueue a job
 * the caller was told had failed (and which a retrying caller has submitted again, under a new id).
 */
class ProducerWriteOnceIT {
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(800);
    /** Longer than every retry the client could still have running after the submit threw. */
    private static final long SETTLE_MILLIS = 10_000;
    private static final Pattern MESSAGE_ID = Pattern.compile("message id ([0-9a-f-]{36})");

    /** The three enqueue commands of a single submit: XADD, the tracked script, the priority-level script. */
    enum Kind {
        PLAIN((client, queue) -> client.submit(Task.builder("plain", String.class).queue(queue).build(), marker(queue))),
        TRACKED((client, queue) -> client.submit(Task.builder("tracked", String.class, String.class).queue(queue).build(),
                marker(queue))),
        PRIORITY((client, queue) -> client.submit(Task.builder("urgent", String.class).queue(queue).build(), marker(queue),
                SubmitOptions.builder().priority(9).build()));

        final BiConsumer<Binomic, String> submit;

        Kind(BiConsumer<Binomic, String> submit) {
            this.submit = submit;
        }
    }

    /**
     * Every kind of submit, and a {@code submitAll} chunk, under one freeze: each on a client and a
     * queue of its own, sent at once so that each is frozen on for as long after it threw, and all
     * given one settle wait after the thaw; a kind's failure names it.
     */
    @Test
    void submitsThatGotNoReplyFromAFrozenRedisAreInTheStreamAtMostOnceAfterTheThaw() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Map<Kind, String> queues = queues("frozen", run);
        String bulkQueue = "frozen-all-" + run;
        Task<String, Void> bulkTask = Task.builder("bulk", String.class).queue(bulkQueue).build();
        try (RedisServer redis = RedisServer.startNew(); Clients clients = new Clients(redis)) {
            Map<Kind, Binomic> byKind = clients.warmedPerKind(queues);
            Binomic bulkClient = clients.open();
            submitAndCheck(Kind.PLAIN, bulkClient, bulkQueue, 1, redis);
            Map<Kind, CompletableFuture<Throwable>> failures = new EnumMap<>(Kind.class);
            CompletableFuture<Throwable> bulkFailure;
            redis.freeze();
            try {
                queues.forEach((kind, queue) -> failures.put(kind, Await.failureOf(() -> kind.submit.accept(byKind.get(kind), queue))));
                bulkFailure = Await.failureOf(() -> bulkClient.submitAll(bulkTask,
                        IntStream.range(0, 10).mapToObj(i -> marker(bulkQueue) + " #" + i).toList()));
                awaitAll(Stream.concat(failures.values().stream(), Stream.of(bulkFailure)).toList());
                // Frozen on: whatever the clients would still resend meanwhile waits in the socket for the thaw.
                RedisServer.sleep(4 * COMMAND_TIMEOUT.toMillis());
            } finally {
                redis.thaw();
            }
            RedisServer.sleep(SETTLE_MILLIS);
            assertAll("one freeze, each submit on its own client and queue",
                    Stream.concat(queues.entrySet().stream().map(q -> (Executable) () -> checkFrozen(q.getKey(), q.getValue(),
                            failures.get(q.getKey()).join(), redis)), Stream.of(() -> checkFrozenBulk(bulkQueue, bulkFailure.join(), redis))));
        }
    }

    /** One kind's submit sent to the frozen Redis, after the thaw and the settle wait: in the stream at most once, as its failure says. */
    private static void checkFrozen(Kind kind, String queue, Throwable failure, RedisServer redis) {
        BrokerException e = assertInstanceOf(BrokerException.class, failure, kind + ": the submit did not throw a BrokerException");
        List<String> ids = entriesOf(redis, queue);
        System.out.println(kind + " under the freeze: " + ids.size() + " entries; threw: " + e.getMessage());
        assertTrue(ids.size() <= 1, kind + ": " + ids.size() + " entries of one submit: " + ids + "; the submit threw: "
                + e.getMessage());
        if (e.getMessage().contains("It was not enqueued")) {
            assertEquals(List.of(), ids, kind + ": " + e.getMessage()); // no connection became ready: nothing was sent
            return;
        }
        assertTrue(e.getMessage().contains("may have been enqueued once, with message id"), kind + ": " + e.getMessage());
        assertTrue(e.getMessage().contains("Task.Builder.unique"), kind + ": " + e.getMessage()); // what makes a second submit safe
        if (ids.size() == 1) {
            assertEquals(messageId(e), ids.getFirst(), kind + ": " + e.getMessage());
        }
    }

    /** A {@code submitAll} chunk (a pipeline of XADDs) whose reply is late is not resent either. */
    private static void checkFrozenBulk(String queue, Throwable failure, RedisServer redis) {
        BrokerException e = assertInstanceOf(BrokerException.class, failure, "submitAll: did not throw a BrokerException");
        List<String> ids = entriesOf(redis, queue);
        System.out.println("submitAll under the freeze: " + ids.size() + " entries; threw: " + e.getMessage());
        assertEquals(ids.size(), ids.stream().distinct().count(), "submitAll: a message enqueued twice: " + ids + "; " + e.getMessage());
        assertTrue(ids.size() <= 11, "submitAll: " + ids);
        assertTrue(e.getMessage().contains("may have been, each at most once"), "submitAll: " + e.getMessage());
        assertTrue(e.getMessage().contains("within " + COMMAND_TIMEOUT.toMillis() + " ms (BrokerConfig.commandTimeout)")
                && !e.getMessage().contains("nettyThreads"), "submitAll: the bound, not Redisson's advice: " + e.getMessage());
    }

    /**
     * Every kind of submit under one stop of Redis, each on a client and a queue of its own, sent at
     * once so that Redis comes back right after each threw; one settle wait for all; a kind's
     * failure names it.
     */
    @Test
    void submitsThatFoundRedisStoppedAreNotEnqueuedWhenRedisComesBack() throws Exception {
        Map<Kind, String> queues = queues("down", UUID.randomUUID().toString().substring(0, 8));
        try (RedisServer redis = RedisServer.startNew(); Clients clients = new Clients(redis)) {
            Map<Kind, Binomic> byKind = clients.warmedPerKind(queues);
            Map<Kind, CompletableFuture<Throwable>> failures = new EnumMap<>(Kind.class);
            redis.stop();
            try {
                queues.forEach((kind, queue) -> failures.put(kind, Await.failureOf(() -> kind.submit.accept(byKind.get(kind), queue))));
                awaitAll(failures.values());
            } finally {
                redis.start();
            }
            RedisServer.sleep(SETTLE_MILLIS);
            assertAll("one stop, each submit on its own client and queue", queues.entrySet().stream().map(q -> () -> {
                Kind kind = q.getKey();
                BrokerException e = assertInstanceOf(BrokerException.class, failures.get(kind).join(),
                        kind + ": the submit did not throw a BrokerException");
                assertEquals(List.of(), entriesOf(redis, q.getValue()), kind + ": enqueued after the submit threw: " + e.getMessage());
                assertTrue(e.getMessage().contains("It was not enqueued"), kind + ": " + e.getMessage() + "; caused by " + causes(e));
                submitAndCheck(kind, byKind.get(kind), q.getValue() + "-after", 1, redis); // the client works again
            }));
        }
    }

    /** Retries off cost no round trip: a plain submit is still one XADD, and nothing else but the partition count read. */
    @Test
    void aPlainSubmitIsStillOneCommand() {
        String queue = "commands-" + UUID.randomUUID().toString().substring(0, 8);
        try (RedisServer redis = RedisServer.startNew(); Binomic client = client(redis)) {
            submitAndCheck(Kind.PLAIN, client, queue, 1, redis);
            redis.call("CONFIG", "RESETSTAT");
            for (int i = 0; i < 200; i++) {
                Kind.PLAIN.submit.accept(client, queue);
            }
            String stats = String.valueOf(redis.call("INFO", "commandstats"));
            System.out.println("commandstats after 200 plain submits: " + stats.replace("\r\n", " "));
            assertTrue(stats.contains("cmdstat_xadd:calls=200,"), stats);
            assertTrue(!stats.contains("cmdstat_eval"), stats);
        }
    }

    /** A queue per kind, named after the fault and the kind. */
    private static Map<Kind, String> queues(String fault, String run) {
        Map<Kind, String> queues = new EnumMap<>(Kind.class);
        for (Kind kind : Kind.values()) {
            queues.put(kind, fault + "-" + kind.name().toLowerCase() + "-" + run);
        }
        return queues;
    }

    /** The clients of one test, closed together: a submit whose reply was lost cannot slow another's. */
    private static final class Clients implements AutoCloseable {
        private final RedisServer redis;
        private final List<Binomic> open = new ArrayList<>();

        Clients(RedisServer redis) {
            this.redis = redis;
        }

        Binomic open() {
            Binomic client = client(redis);
            open.add(client);
            return client;
        }

        /** A client per kind, each connected, its scripts loaded and its partition count read by a submit of its kind. */
        Map<Kind, Binomic> warmedPerKind(Map<Kind, String> queues) {
            Map<Kind, Binomic> byKind = new EnumMap<>(Kind.class);
            queues.forEach((kind, queue) -> {
                Binomic client = open();
                submitAndCheck(kind, client, queue + "-warm", 1, redis);
                byKind.put(kind, client);
            });
            return byKind;
        }

        @Override
        public void close() {
            open.forEach(Binomic::close);
        }
    }

    private static void awaitAll(Collection<CompletableFuture<Throwable>> submits) throws Exception {
        CompletableFuture.allOf(submits.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
    }

    private static Binomic client(RedisServer redis) {
        return Binomic.builder().config(BinomicConfig.builder().broker(BrokerConfig.builder().url(redis.url())
                .commandTimeout(COMMAND_TIMEOUT).build()).schedulePeriodicTasks(false).build()).build().start();
    }

    private static void submitAndCheck(Kind kind, Binomic client, String queue, int expected, RedisServer redis) {
        kind.submit.accept(client, queue);
        assertEquals(expected, entriesOf(redis, queue).size(), queue);
    }

    private static String marker(String queue) {
        return "job of " + queue;
    }

    /** The message ids of the entries that hold the marker of {@code queue}, in every stream of the queue (its priority levels too). */
    private static List<String> entriesOf(RedisServer redis, String queue) {
        List<?> keys = (List<?>) redis.call("KEYS", "binomic:{" + queue + "}:*");
        return keys.stream().map(String::valueOf).filter(k -> "stream".equals(String.valueOf(redis.call("TYPE", k))))
                .flatMap(k -> ((List<?>) redis.call("XRANGE", k, "-", "+")).stream())
                .map(entry -> (List<?>) ((List<?>) entry).get(1))
                .filter(fields -> fields.stream().anyMatch(v -> String.valueOf(v).contains(marker(queue))))
                .map(fields -> String.valueOf(fields.get(fields.indexOf("id") + 1)))
                .toList();
    }

    private static List<String> causes(Throwable e) {
        return java.util.stream.Stream.iterate(e, c -> c != null, Throwable::getCause).map(c -> c.getClass().getName()).toList();
    }

    private static String messageId(BrokerException e) {
        Matcher m = MESSAGE_ID.matcher(e.getMessage());
        assertTrue(m.find(), e.getMessage());
        return m.group(1);
    }
}
