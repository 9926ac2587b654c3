package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSubmitThatGotNoReplyFromAFrozenRedisIsInTheStreamOnceAfterTheThaw(Kind kind) throws Exception {
        String queue = "frozen-" + kind.name().toLowerCase() + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (RedisServer redis = RedisServer.startNew(); Binomic client = client(redis)) {
            submitAndCheck(kind, client, queue + "-warm", 1, redis); // connected, scripts loaded, partition count read
            redis.freeze();
            BrokerException e;
            try {
                e = assertThrows(BrokerException.class, () -> kind.submit.accept(client, queue));
                // Frozen on: whatever the client would still resend meanwhile waits in the socket for the thaw.
                RedisServer.sleep(4 * COMMAND_TIMEOUT.toMillis());
            } finally {
                redis.thaw();
            }
            RedisServer.sleep(SETTLE_MILLIS);
            List<String> ids = entriesOf(redis, queue);
            assertTrue(ids.size() <= 1, kind + ": " + ids.size() + " entries of one submit: " + ids + "; the submit threw: "
                    + e.getMessage());
            if (e.getMessage().contains("It was not enqueued")) {
                assertEquals(List.of(), ids, e.getMessage()); // no connection became ready: nothing was sent
                return;
            }
            assertTrue(e.getMessage().contains("may have been enqueued once, with message id"), e.getMessage());
            assertTrue(e.getMessage().contains("Task.Builder.unique"), e.getMessage()); // what makes a second submit safe
            if (ids.size() == 1) {
                assertEquals(messageId(e), ids.getFirst(), e.getMessage());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSubmitThatFoundRedisStoppedIsNotEnqueuedWhenRedisComesBack(Kind kind) throws Exception {
        String queue = "down-" + kind.name().toLowerCase() + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (RedisServer redis = RedisServer.startNew(); Binomic client = client(redis)) {
            submitAndCheck(kind, client, queue + "-warm", 1, redis);
            redis.stop();
            BrokerException e;
            try {
                e = assertThrows(BrokerException.class, () -> kind.submit.accept(client, queue));
            } finally {
                redis.start();
            }
            RedisServer.sleep(SETTLE_MILLIS);
            assertEquals(List.of(), entriesOf(redis, queue), kind + ": enqueued after the submit threw: " + e.getMessage());
            assertTrue(e.getMessage().contains("It was not enqueued"), e.getMessage() + "; caused by " + causes(e));
            submitAndCheck(kind, client, queue + "-after", 1, redis); // the client works again
        }
    }

    /** A {@code submitAll} chunk (a pipeline of XADDs) whose reply is late is not resent either. */
    @org.junit.jupiter.api.Test
    void aSubmitAllThatGotNoReplyFromAFrozenRedisEnqueuesEachMessageAtMostOnce() {
        String queue = "frozen-all-" + UUID.randomUUID().toString().substring(0, 8);
        Task<String, Void> task = Task.builder("bulk", String.class).queue(queue).build();
        try (RedisServer redis = RedisServer.startNew(); Binomic client = client(redis)) {
            submitAndCheck(Kind.PLAIN, client, queue, 1, redis);
            redis.freeze();
            BrokerException e;
            try {
                e = assertThrows(BrokerException.class, () -> client.submitAll(task,
                        java.util.stream.IntStream.range(0, 10).mapToObj(i -> marker(queue) + " #" + i).toList()));
                RedisServer.sleep(4 * COMMAND_TIMEOUT.toMillis());
            } finally {
                redis.thaw();
            }
            RedisServer.sleep(SETTLE_MILLIS);
            List<String> ids = entriesOf(redis, queue);
            assertEquals(ids.size(), ids.stream().distinct().count(), "a message enqueued twice: " + ids + "; " + e.getMessage());
            assertTrue(ids.size() <= 11, ids.toString());
            assertTrue(e.getMessage().contains("may have been, each at most once"), e.getMessage());
            assertTrue(e.getMessage().contains("within " + COMMAND_TIMEOUT.toMillis() + " ms (BrokerConfig.commandTimeout)")
                    && !e.getMessage().contains("nettyThreads"), "the bound, not Redisson's advice: " + e.getMessage());
        }
    }

    /** Retries off cost no round trip: a plain submit is still one XADD, and nothing else but the partition count read. */
    @org.junit.jupiter.api.Test
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
