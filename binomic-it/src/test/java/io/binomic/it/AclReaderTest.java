package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.RateLimit;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.it.process.CliRun;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reader ACL user of the documented rule sets runs {@code binomic queues}, {@code binomic dlq
 * list} and a read-only dashboard (its overview and {@code /metrics}); a write it tries is refused
 * with a message that names the user, the command and the fix. The queue is filled over the admin
 * connection.
 */
class AclReaderTest {
    private final RedisServer redis = AclRedis.shared();
    private final String queue = "acl-reader-" + UUID.randomUUID().toString().substring(0, 8);

    private static Message message(String queue, String task) {
        return Message.fromWire(UUID.randomUUID(), task, queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of());
    }

    @BeforeEach
    void threeReadyOneDead() throws InterruptedException {
        try (Broker admin = Brokers.redis(redis)) {
            admin.start(List.of(queue));
            admin.enqueueAll(List.of(message(queue, "mail"), message(queue, "mail"), message(queue, "mail"),
                    message(queue, "broken")));
            List<Delivery> first = admin.fetch(List.of(queue), "admin", 1, Duration.ofMillis(200));
            admin.settle("admin", List.of(new Settlement.DeadLetter(first.getFirst(),
                    new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "", 1, Instant.now()))));
        }
    }

    @Test
    void queuesAndDeadLettersListAsTheReader() {
        String url = AclRedis.url(redis, AclRedis.READER);
        CliRun queues = CliRun.of("queues", "--broker", url, "--queues", queue);
        assertEquals(0, queues.exit(), queues.err());
        assertTrue(queues.out().lines().anyMatch(l -> l.matches(queue + "\\s+3\\s+0\\s+0\\s+0\\s+1\\s+1\\s+-\\s+-\\s*")), queues.out());

        CliRun dlq = CliRun.of("dlq", "list", "--broker", url, "--queues", queue);
        assertEquals(0, dlq.exit(), dlq.err());
        assertTrue(dlq.out().contains("mail") && dlq.out().contains("MAX_ATTEMPTS"), dlq.out());
    }

    @Test
    void theDashboardShowsTheQueueAsTheReader() throws Exception {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.READER)).schedulePeriodicTasks(false)
                .worker(io.binomic.api.WorkerConfig.builder().queues(queue).build()).build();
        try (Binomic reader = Binomic.builder().config(config).prepareQueues(false).build().start();
             Dashboard dashboard = reader.dashboard().port(0).readOnly(true).start();
             HttpClient http = HttpClient.newHttpClient()) {
            assertEquals(new QueueStats(queue, 3, 0, 0, 1, 1), reader.queueStats(queue));
            for (String page : List.of("/", "/metrics")) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(dashboard.uri().resolve(page)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), page + ": " + r.body());
                assertTrue(r.body().contains(queue), page + " shows the queue: " + r.body());
            }
            String metrics = http.send(HttpRequest.newBuilder(dashboard.uri().resolve("/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("binomic_batches{state=\"open\"}") && metrics.contains("binomic_workflows{state=\"failed\"}"),
                    "the reader reads the broker-wide counts of batches and workflows: " + metrics);
        }
    }

    @Test
    void theReaderSeesAQueuesLimitsAndWhatTheyHoldOnTheQueuesPageAndMetrics() throws Exception {
        try (Broker admin = Brokers.redis(redis)) {
            admin.start(List.of(queue));
            admin.capability(FlowLimits.class).orElseThrow().setQueueLimits(queue, QueueLimits.builder().concurrencyLimit(2)
                    .rateLimit(RateLimit.perSecond(50)).build());
        }
        BinomicConfig config = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.READER)).schedulePeriodicTasks(false)
                .worker(io.binomic.api.WorkerConfig.builder().queues(queue).build()).build();
        try (Binomic reader = Binomic.builder().config(config).prepareQueues(false).build().start();
             Dashboard dashboard = reader.dashboard().port(0).readOnly(true).start();
             HttpClient http = HttpClient.newHttpClient()) {
            String page = http.send(HttpRequest.newBuilder(dashboard.uri().resolve("/queues")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(page.contains("<td class=\"setting\">rate 50 per PT1S (burst 1), concurrency 2</td><td class=\"in-use\">0 of 2</td>"
                    + "<td class=\"waiting-slot\">0</td><td class=\"waiting-rate\">0</td>"), page);
            String metrics = http.send(HttpRequest.newBuilder(dashboard.uri().resolve("/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            for (String line : List.of("binomic_queue_limit_concurrency{queue=\"" + queue + "\",limit=\"queue\"} 2",
                    "binomic_queue_limit_slots_in_use{queue=\"" + queue + "\",limit=\"queue\"} 0",
                    "binomic_queue_limit_waiting{queue=\"" + queue + "\",limit=\"queue\",waiting=\"rate\"} 0")) {
                assertTrue(metrics.lines().anyMatch(line::equals), "missing line " + line + " in\n" + metrics);
            }
        }
    }

    @Test
    void aWriteTheReaderMayNotDoNamesTheUserTheCommandAndTheFix() {
        CliRun pause = CliRun.of("queue", "pause", queue, "--broker", AclRedis.url(redis, AclRedis.READER));
        assertEquals(1, pause.exit(), pause.out());
        assertTrue(pause.err().contains("ACL user 'binomic-reader' lacks command sadd")
                && pause.err().contains("ACL SETUSER binomic-reader +sadd") && pause.err().contains("redis.md"), pause.err());
        assertEquals(0L, redis.call("EXISTS", "binomic:{" + queue + "}:paused"), "nothing was paused");
    }
}
