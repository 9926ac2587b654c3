package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.core.internal.web.Promtool;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The transactional outbox against a PostgreSQL and a Redis of the test's own, with a ledger of
 * runs per job id: a rollback gives no job, a commit one run, and a relay SIGKILLed between the
 * store and the delete, two relays at once, Redis down for a while and a database restart each
 * still give exactly one run per committed job.
 */
class OutboxIT {
    /** How long Redis stays down in the outage test: a minute in production terms, shortened to keep the suite quick. */
    private static final Duration OUTAGE = Duration.ofSeconds(15);
    @RegisterExtension
    static final OutboxServers servers = new OutboxServers();

    /** The argument of the ledger's task: the job's number in its test. */
    public record Item(int n) { }

    /** Runs per job id, and the numbers in the order the jobs started. */
    private final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final List<Integer> startOrder = new CopyOnWriteArrayList<>();
    private String queue;
    private Task<Item, Void> task;

    @BeforeEach
    void newQueue() {
        queue = "outbox-" + UUID.randomUUID().toString().substring(0, 8);
        task = Task.builder("ledger", Item.class).queue(queue).build();
    }

    private Binomic client(int concurrency) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(servers.redis().url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).concurrency(concurrency).leaseTimeout(Duration.ofSeconds(30))
                        .pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        return Binomic.builder().config(config).handle(task, item -> {
            runs.computeIfAbsent(TaskContext.current().messageId(), id -> new AtomicInteger()).incrementAndGet();
            startOrder.add(item.n());
            return null;
        }).build().start();
    }

    private OutboxRelay.Builder relay(Binomic binomic) {
        return OutboxRelay.builder(binomic, servers.dataSource()).pollInterval(Duration.ofMillis(500)).errorBackoff(Duration.ofMillis(200));
    }

    /** Commits one transaction that writes {@code ns} into the outbox; returns the job ids. */
    private List<UUID> commit(Outbox outbox, List<Item> items) throws SQLException {
        try (Connection c = servers.dataSource().getConnection()) {
            c.setAutoCommit(false);
            List<UUID> ids = outbox.submitAll(c, task, items, SubmitOptions.NONE).stream().map(JobHandle::id).toList();
            c.commit();
            return ids;
        }
    }

    private static List<Item> items(int from, int count) {
        return IntStream.range(from, from + count).mapToObj(Item::new).toList();
    }

    private static long waiting() {
        return servers.count("");
    }

    /** Waits until every id of {@code ids} ran, then a while longer, and checks that each ran once and nothing else ran. */
    private void assertEachRanOnce(List<UUID> ids) {
        Await.until(Duration.ofSeconds(60), () -> ids.stream().allMatch(runs::containsKey),
                () -> ids.stream().filter(runs::containsKey).count() + " of " + ids.size() + " ran");
        RedisServer.sleep(1500); // a duplicate would be relayed and run within this
        for (UUID id : ids) {
            assertEquals(1, runs.get(id).get(), "job " + id + " ran " + runs.get(id) + " times");
        }
        assertEquals(ids.size(), runs.size(), "jobs that ran but were never committed: " + runs.keySet().stream()
                .filter(id -> !ids.contains(id)).toList());
    }

    @Test
    void rolledBackSubmitGivesNoJobAndCommittedOneRunsOnce() throws SQLException {
        try (Binomic binomic = client(4); OutboxRelay relay = relay(binomic).build().start()) {
            binomic.startWorker();
            Outbox outbox = Outbox.of(binomic);
            UUID rolledBack;
            try (Connection c = servers.dataSource().getConnection()) {
                c.setAutoCommit(false);
                rolledBack = outbox.submit(c, task, new Item(1)).id();
                c.rollback();
            }
            List<UUID> committed = commit(outbox, items(2, 1));

            assertEachRanOnce(committed);
            assertFalse(runs.containsKey(rolledBack), "the rolled-back job ran");
            assertEquals(0, waiting());
            Await.relayed(relay, 1);
            assertEquals(1, relay.relayed(), "rows relayed");
        }
    }

    @Test
    void committedJobsRunOnceEachWithDelayPriorityAndUniqueness() throws SQLException {
        try (Binomic binomic = client(8); OutboxRelay relay = relay(binomic).batchSize(50).build().start()) {
            binomic.startWorker();
            Outbox outbox = Outbox.of(binomic);
            List<UUID> ids = new ArrayList<>();
            for (int t = 0; t < 30; t++) {
                ids.addAll(commit(outbox, items(t * 10, 10)));
            }
            Instant submitted = Instant.now();
            UUID delayed;
            UUID urgent;
            UUID unique;
            try (Connection c = servers.dataSource().getConnection()) {
                c.setAutoCommit(false);
                delayed = outbox.submit(c, task, new Item(1000), SubmitOptions.builder().delay(Duration.ofSeconds(2)).build()).id();
                urgent = outbox.submit(c, task, new Item(1001), SubmitOptions.builder().priority(9).build()).id();
                SubmitOptions once = SubmitOptions.builder().unique(Uniqueness.forPeriod(Duration.ofMinutes(5)), "order-7").build();
                unique = outbox.submit(c, task, new Item(1002), once).id();
                outbox.submit(c, task, new Item(1003), once); // a duplicate of the one above: dropped by the broker
                c.commit();
            }
            ids.add(delayed);
            ids.add(urgent);
            ids.add(unique);

            assertEachRanOnce(ids);
            assertFalse(startOrder.contains(1003), "the duplicate of a unique job ran");
            assertTrue(startOrder.indexOf(1000) > startOrder.indexOf(1001), "the delayed job ran before its delay");
            assertTrue(Duration.between(submitted, Instant.now()).compareTo(Duration.ofSeconds(2)) >= 0);
            assertEquals(0, waiting());
            Await.relayed(relay, 303);
            assertEquals(303, relay.relayed(), "jobs relayed");
            assertEquals(1, relay.duplicates(), "the unique job's duplicate, counted apart");
        }
    }

    @Test
    void metricsAndTheOverviewShowTheRowsWaitingWhileTheRelayRuns() throws Exception {
        try (Binomic binomic = client(1)) {
            Outbox outbox = Outbox.of(binomic);
            commit(outbox, items(0, 3));
            try (Connection holder = servers.dataSource().getConnection(); Statement lock = holder.createStatement()) {
                holder.setAutoCommit(false);
                lock.executeQuery("SELECT seq FROM binomic_outbox FOR UPDATE").close(); // the relay skips rows another holds
                try (OutboxRelay relay = relay(binomic).build().start(); Dashboard dashboard = binomic.dashboard().port(0).start()) {
                    String metrics = get(dashboard.uri().resolve("metrics"));
                    assertTrue(metrics.lines().anyMatch("binomic_outbox_waiting{table=\"binomic_outbox\"} 3"::equals), metrics);
                    assertTrue(metrics.lines().anyMatch("binomic_outbox_up{table=\"binomic_outbox\"} 1"::equals), metrics);
                    assertTrue(metrics.lines().anyMatch("binomic_outbox_duplicates_total{table=\"binomic_outbox\"} 0"::equals), metrics);
                    assertTrue(metrics.lines().anyMatch("binomic_outbox_set_aside{table=\"binomic_outbox\"} 0"::equals), metrics);
                    double age = Double.parseDouble(metrics.lines().filter(l -> l.startsWith("binomic_outbox_oldest_age_seconds{"))
                            .findFirst().orElseThrow().replaceAll(".* ", ""));
                    assertTrue(age > 0, "oldest age " + age);
                    Promtool.assertValid(metrics);
                    String overview = get(dashboard.uri());
                    assertTrue(overview.contains("<td class=\"waiting\">3</td>"), overview);

                    holder.rollback();
                    Await.until(Duration.ofSeconds(30), () -> get(dashboard.uri().resolve("metrics")).lines()
                            .anyMatch("binomic_outbox_waiting{table=\"binomic_outbox\"} 0"::equals), () -> "rows still waiting");
                    Await.relayed(relay, 3);
                    assertEquals(3, relay.relayed());
                }
            }
            try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
                String after = get(dashboard.uri().resolve("metrics"));
                assertFalse(after.contains("binomic_outbox"), "a closed relay's outbox still shows: " + after);
            }
        }
    }

    private static String get(URI uri) {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void whatTheOutboxCannotKeepIsRefusedWithItsReason() throws SQLException {
        try (Binomic binomic = client(1); Connection c = servers.dataSource().getConnection()) {
            Outbox outbox = Outbox.of(binomic);
            c.setAutoCommit(false);
            IllegalArgumentException whileQueued = assertThrows(IllegalArgumentException.class, () -> outbox.submit(c, task, new Item(1),
                    SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofMinutes(1))).build()));
            assertTrue(whileQueued.getMessage().contains("FOR_PERIOD"), whileQueued.getMessage());
            IllegalArgumentException debounce = assertThrows(IllegalArgumentException.class, () -> outbox.submit(c, task, new Item(1),
                    SubmitOptions.builder().debounce("k").delay(Duration.ofSeconds(1)).build()));
            assertTrue(debounce.getMessage().contains("debounce"), debounce.getMessage());
            IllegalArgumentException partition = assertThrows(IllegalArgumentException.class, () -> outbox.submit(c, task, new Item(1),
                    SubmitOptions.builder().partitionKey("p").build()));
            assertTrue(partition.getMessage().contains("partition key"), partition.getMessage());
            c.rollback();
        }
    }

    @Test
    void relayKilledBetweenStoreAndDeleteStillGivesOneJobEach() throws Exception {
        List<UUID> ids;
        try (Binomic producer = client(1)) {
            ids = commit(Outbox.of(producer), items(0, 50));
        }
        try (ChildWorker child = ChildWorker.start(OutboxRelayChild.class, List.of(servers.redis().url(), servers.postgres().jdbcUrl()))) {
            child.awaitLog("STORED BEFORE DELETE", Duration.ofSeconds(60));
            child.kill9();
        }
        assertEquals(50, waiting(), "the killed relay's transaction must have rolled back, its rows waiting");
        assertEquals(50L, servers.redis().call("XLEN", "binomic:{" + queue + "}:stream"),
                "the killed relay stored the jobs before it died");

        try (Binomic binomic = client(8); OutboxRelay relay = relay(binomic).build().start()) {
            binomic.startWorker();
            assertEachRanOnce(ids);
            assertEquals(0, waiting());
            assertEquals(0, relay.relayed(), "the second relay stored nothing new");
            assertEquals(50, relay.duplicates(), "the second relay moved the rows again; the broker dropped them as duplicates");
        }
    }

    @Test
    void applicationKilledAfterItsCommitsStillGetsEachCommittedJobOnceAndNoneOfItsOpenTransaction() throws Exception {
        List<UUID> committed;
        UUID open;
        try (ChildWorker app = ChildWorker.start(OutboxAppChild.class,
                List.of(servers.redis().url(), servers.postgres().jdbcUrl(), queue, "40"))) {
            app.awaitLog("OPEN ", Duration.ofSeconds(60));
            app.kill9();
            committed = app.log().lines().filter(l -> l.startsWith("COMMITTED ")).map(l -> UUID.fromString(l.substring(10))).toList();
            open = app.log().lines().filter(l -> l.startsWith("OPEN ")).map(l -> UUID.fromString(l.substring(5))).findFirst().orElseThrow();
        }
        assertEquals(40, committed.size(), "commits the application reported before it was killed");
        assertEquals(0L, servers.redis().call("XLEN", "binomic:{" + queue + "}:stream"),
                "the application ran no relay, yet jobs reached Redis");
        assertEquals(40, waiting(), "the killed application's commits must wait in the table, its open transaction gone");

        try (Binomic binomic = client(8); OutboxRelay relay = relay(binomic).build().start()) {
            binomic.startWorker();
            assertEachRanOnce(committed);
            assertFalse(runs.containsKey(open), "the job of the transaction the kill left open ran");
            Await.relayed(relay, 40);
            assertEquals(40, relay.relayed(), "rows relayed");
        }
    }

    @Test
    void twoRelaysAtOnceRelayEachRowOnce() throws Exception {
        try (Binomic binomic = client(8);
             OutboxRelay first = relay(binomic).batchSize(20).build().start();
             OutboxRelay second = relay(binomic).batchSize(20).build().start()) {
            binomic.startWorker();
            Outbox outbox = Outbox.of(binomic);
            List<UUID> ids = new ArrayList<>();
            for (int t = 0; t < 100; t++) {
                ids.addAll(commit(outbox, items(t * 10, 10)));
            }
            assertEachRanOnce(ids);
            assertEquals(1000, first.relayed() + second.relayed(), "rows relayed: " + first.relayed() + " + " + second.relayed());
        }
    }

    @Test
    void whileRedisIsDownRowsWaitThenGoInCommitOrder() throws Exception {
        List<UUID> ids = new ArrayList<>();
        try (Binomic binomic = client(1); OutboxRelay relay = relay(binomic).batchSize(30).build().start()) {
            Outbox outbox = Outbox.of(binomic);
            servers.redis().stop();
            long down = System.nanoTime();
            try {
                for (int n = 0; n < 100; n++) {
                    ids.addAll(commit(outbox, items(n, 1)));
                }
                // An outage of OUTAGE: long enough for many failed rounds and Redisson's reconnect attempts.
                RedisServer.sleep(Math.max(0, OUTAGE.toMillis() - (System.nanoTime() - down) / 1_000_000));
                assertEquals(100, waiting(), "rows relayed while Redis was down");
                assertTrue(relay.failures() > 0, "the relay never tried while Redis was down");
            } finally {
                servers.redis().start();
            }
            Await.until(Duration.ofSeconds(120), () -> waiting() == 0, () -> "rows still waiting after Redis came back");
            // A round whose reply was lost to the outage may have stored its rows: the retry finds them there.
            assertEquals(100, relay.relayed() + relay.duplicates(), "rows relayed " + relay.relayed() + " + found stored " + relay.duplicates());
            binomic.startWorker(); // one at a time: the runs follow the stream's order
            assertEachRanOnce(ids);
            assertEquals(IntStream.range(0, 100).boxed().toList(), startOrder, "jobs went into the queue out of commit order");
        }
    }

    @Test
    void relayReconnectsAfterTheDatabaseRestarts() throws Exception {
        try (Binomic binomic = client(4); OutboxRelay relay = relay(binomic).build().start()) {
            binomic.startWorker();
            Outbox outbox = Outbox.of(binomic);
            List<UUID> ids = new ArrayList<>(commit(outbox, items(0, 10)));
            Await.until(Duration.ofSeconds(30), () -> waiting() == 0, () -> "rows waiting before the restart");
            servers.postgres().stop();
            Await.until(Duration.ofSeconds(30), () -> !relay.listening(), () -> "relay did not notice");
            servers.postgres().start();
            ids.addAll(commit(outbox, items(10, 10)));
            assertEachRanOnce(ids);
            Await.until(Duration.ofSeconds(30), relay::listening, () -> "the relay did not LISTEN again");
        }
    }
}
