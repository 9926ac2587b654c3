package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.BrokerHealthReport;
import io.binomic.api.spi.BrokerHealthReport.ServerSetting;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.core.internal.CoreAccess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Redis' {@code maxmemory-policy}: a policy that lets Redis delete Binomic's keys when memory is
 * full refuses the start, naming the policy and the option that accepts it; with the option the
 * client starts and says so; a change after start is logged once and shown in {@code /metrics} and
 * on the dashboard; under {@code volatile-*} queued jobs survive memory pressure while ended job
 * records may go; a server that refuses {@code CONFIG} is logged once and does not stop the start.
 */
class RedisEvictionPolicyIT {
    private static final String LOGGER = "io.binomic.redis.internal.RedisBroker";

    private final String queue = "evict-" + UUID.randomUUID().toString().substring(0, 8);
    private final Task<String, String> echo = Task.builder("echo", String.class, String.class).queue(queue).build();
    private final List<String> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getMessage() != null && record.getMessage().contains("maxmemory-policy")) {
                logged.add(record.getLevel() + " " + record.getMessage());
            }
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };
    /** Held: the JDK keeps loggers only weakly, and one collected would be recreated without the handler. */
    private final Logger brokerLog = Logger.getLogger(LOGGER);
    private RedisServer redis;

    @BeforeEach
    void captureLog() {
        brokerLog.addHandler(capture);
    }

    @AfterEach
    void stop() {
        brokerLog.removeHandler(capture);
        if (redis != null) {
            redis.close();
        }
    }

    private BinomicConfig config(Map<String, String> options) {
        return BinomicConfig.builder().broker(BrokerConfig.builder().url(redis.url()).options(options).build())
                .schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).build()).build();
    }

    private static List<ServerSetting> settings(Binomic binomic) {
        return CoreAccess.get().broker(binomic).capability(BrokerHealthReport.class).orElseThrow().serverSettings();
    }

    private static String get(URI uri) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private String okSample(String policy, int ok) {
        return "binomic_broker_setting_ok{setting=\"maxmemory-policy\",server=\"127.0.0.1:" + redis.port() + "\",value=\""
                + policy + "\"} " + ok;
    }

    @Test
    void aStartUnderAllkeysLruIsRefusedNamingThePolicyAndTheOptionThatAcceptsIt() {
        redis = RedisServer.startNew("--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru");
        Binomic.Builder builder = Binomic.builder().config(config(Map.of())).handle(echo, s -> s);

        BrokerException refused = assertThrows(BrokerException.class, () -> builder.build().start());

        String m = refused.getMessage();
        assertTrue(m.contains("maxmemory-policy allkeys-lru") && m.contains("queued jobs") && m.contains("noeviction")
                && m.contains("broker.option.eviction.allowed = true"), m);
    }

    @Test
    void theOptionAcceptsAnEvictingPolicyAndTheClientReportsIt() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru");
        try (Binomic binomic = Binomic.builder().config(config(Map.of("eviction.allowed", "true"))).handle(echo, s -> s).build().start();
             Dashboard dashboard = binomic.dashboard().port(0).start()) {
            binomic.startWorker();
            assertEquals("ok", binomic.submit(echo, "ok").await(Duration.ofSeconds(10)));

            ServerSetting policy = settings(binomic).getFirst();
            assertEquals("allkeys-lru", policy.value().orElseThrow());
            assertFalse(policy.safe());
            assertTrue(policy.warning().orElseThrow().contains("queued jobs"), policy.toString());
            assertTrue(get(dashboard.uri().resolve("metrics")).contains(okSample("allkeys-lru", 0)));
            assertTrue(logged.stream().anyMatch(l -> l.startsWith("WARNING") && l.contains("allkeys-lru")
                    && l.contains("accepted by BrokerConfig option eviction.allowed")), logged.toString());
        }
    }

    @Test
    void aPolicyChangedAfterStartIsLoggedOnceAndShownInMetricsAndOnTheOverview() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "20mb");
        try (Binomic binomic = Binomic.builder().config(config(Map.of("eviction.recheck", "PT0.2S"))).handle(echo, s -> s).build().start();
             Dashboard dashboard = binomic.dashboard().port(0).start()) {
            binomic.startWorker();
            assertTrue(settings(binomic).getFirst().safe(), settings(binomic).toString());
            assertTrue(get(dashboard.uri().resolve("metrics")).contains(okSample("noeviction", 1)));

            redis.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
            Await.until(Duration.ofSeconds(10), () -> {
                binomic.queueStats(queue); // broker calls start the re-check when it is due
                return !settings(binomic).getFirst().safe();
            }, () -> "the change of policy was not seen: " + settings(binomic));
            for (int i = 0; i < 10; i++) {
                binomic.queueStats(queue);
                Thread.sleep(100);
            }

            assertEquals(1, logged.stream().filter(l -> l.startsWith("WARNING") && l.contains("allkeys-lru (was noeviction)")
                    && l.contains("set it to noeviction")).count(), "logged once per change: " + logged);
            String metrics = get(dashboard.uri().resolve("metrics"));
            assertTrue(metrics.contains(okSample("allkeys-lru", 0)), metrics);
            String overview = get(dashboard.uri());
            assertTrue(overview.contains("id=\"server-settings\"") && overview.contains("allkeys-lru"), overview);

            redis.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
            Await.until(Duration.ofSeconds(10), () -> {
                binomic.queueStats(queue);
                return settings(binomic).getFirst().safe();
            }, () -> "the policy set back was not seen: " + settings(binomic));
            assertTrue(logged.stream().anyMatch(l -> l.startsWith("INFO") && l.contains("noeviction again")), logged.toString());
            assertFalse(get(dashboard.uri()).contains("id=\"server-settings\""), "nothing at risk is shown when all is safe");
        }
    }

    /**
     * {@code volatile-lru} is refused like {@code allkeys-*}, for what it risks; accepted, it
     * evicts under memory pressure only keys with a time to live: the queued jobs (a stream has
     * none) all stay, while an ended job's record, which keeps a retention time, is evicted.
     */
    @Test
    void volatileLruIsRefusedForWhatItRisksAndAcceptedKeepsQueuedJobsWhileEndedJobRecordsMayGo() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "8mb", "--maxmemory-policy", "volatile-lru");
        Binomic.Builder refusedBuilder = Binomic.builder().config(config(Map.of())).handle(echo, s -> s);
        BrokerException refused = assertThrows(BrokerException.class, () -> refusedBuilder.build().start());
        assertTrue(refused.getMessage().contains("maxmemory-policy volatile-lru") && refused.getMessage().contains("ended job records")
                && refused.getMessage().contains("queued jobs are kept"), refused.getMessage());

        BinomicConfig accepted = config(Map.of("eviction.allowed", "true"));
        UUID ended;
        try (Binomic worker = Binomic.builder().config(accepted).handle(echo, s -> s).build().start()) {
            worker.startWorker();
            JobHandle<String> done = worker.submit(echo, "done");
            assertEquals("done", done.await(Duration.ofSeconds(10)));
            ended = done.id();
        }
        String record = "binomic:{" + queue + "}:job:" + ended;
        assertEquals(1L, redis.call("EXISTS", record), "the ended job's record is kept for its retention");
        try (Binomic producer = Binomic.builder().config(accepted).build().start()) {
            for (int i = 0; i < 5; i++) {
                producer.submit(echo, "queued-" + i);
            }
            String filler = "x".repeat(100_000);
            for (int i = 0; i < 300; i++) {
                redis.call("SET", "filler-" + i, filler, "PX", "600000"); // keys with a time to live, like the records
            }
            assertTrue(Long.parseLong(redis.call("INFO", "stats").toString().replaceAll("(?s).*evicted_keys:(\\d+).*", "$1")) > 0,
                    "memory pressure evicted keys");
            assertEquals(5, producer.queueStats(queue).ready(), "every queued job is still queued");
            assertEquals(0L, redis.call("EXISTS", record), "the ended job's record was evicted before its retention ended");
        }
    }

    /** A server without CONFIG (managed Redis) still shows its policy in INFO memory: an evicting one is refused all the same. */
    @Test
    void aServerThatRefusesConfigIsReadThroughInfoMemory() {
        redis = RedisServer.startNew("--rename-command", "CONFIG", "", "--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru");
        Binomic.Builder builder = Binomic.builder().config(config(Map.of())).handle(echo, s -> s);

        BrokerException refused = assertThrows(BrokerException.class, () -> builder.build().start());

        assertTrue(refused.getMessage().contains("maxmemory-policy allkeys-lru"), refused.getMessage());
    }

    /** The documented least-privilege users lack CONFIG (it shows requirepass) and are checked all the same. */
    @Test
    void theDocumentedAclUsersAreRefusedAnEvictingPolicyAndStartUnderNoeviction() throws Exception {
        redis = RedisServer.startNew("--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru");
        AclRedis.createUsers(redis, AclRedis.rules());
        for (String user : List.of(AclRedis.WORKER, AclRedis.PRODUCER, AclRedis.READER)) {
            BrokerConfig asUser = AclRedis.as(user).apply(BrokerConfig.builder().url(redis.url())).build();
            BinomicConfig config = BinomicConfig.builder().broker(asUser).schedulePeriodicTasks(false).build();
            BrokerException refused = assertThrows(BrokerException.class, () -> Binomic.builder().config(config).build().start(), user);
            assertTrue(refused.getMessage().contains("maxmemory-policy allkeys-lru"), user + ": " + refused.getMessage());
        }

        redis.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
        BrokerConfig worker = AclRedis.as(AclRedis.WORKER).apply(BrokerConfig.builder().url(redis.url())).build();
        try (Binomic binomic = Binomic.builder().config(BinomicConfig.builder().broker(worker).schedulePeriodicTasks(false).build())
                .build().start()) {
            ServerSetting policy = settings(binomic).getFirst();
            assertEquals("noeviction", policy.value().orElseThrow(), policy.toString());
            assertTrue(logged.stream().noneMatch(l -> l.contains("could not read")), "no warning for a policy read: " + logged);
        }
    }

    @Test
    void aUserRefusedConfigAndInfoIsLoggedOnceAndTheClientStarts() throws Exception {
        redis = RedisServer.startNew();
        AclRedis.createUsers(redis, List.of(AclRedis.rule(AclRedis.WORKER).replace(" +info ", " ")));
        BinomicConfig plain = config(Map.of("eviction.recheck", "PT0.2S"));
        BinomicConfig asWorker = BinomicConfig.builder().broker(AclRedis.as(AclRedis.WORKER).apply(plain.broker().toBuilder()).build())
                .schedulePeriodicTasks(false).worker(plain.worker()).build();
        try (Binomic binomic = Binomic.builder().config(asWorker).handle(echo, s -> s).build().start()) {
            binomic.startWorker();
            assertEquals("ok", binomic.submit(echo, "ok").await(Duration.ofSeconds(10)));
            for (int i = 0; i < 10; i++) {
                binomic.queueStats(queue);
                Thread.sleep(100);
            }
            ServerSetting policy = settings(binomic).getFirst();
            assertTrue(policy.value().isEmpty() && policy.warning().orElseThrow().contains("CONFIG GET refused")
                    && policy.warning().orElseThrow().contains("INFO memory refused"), policy.toString());
            assertEquals(1, logged.stream().filter(l -> l.startsWith("WARNING") && l.contains("could not read maxmemory-policy")).count(),
                    "logged once: " + logged);
        }
    }
}
