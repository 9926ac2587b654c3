package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Logger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The outbox in the long chaos run. Redis stopped for a minute while the application goes on
 * committing outbox rows, one transaction after another, a fifth of them rolled back after
 * {@code Outbox.submit}, before, during and after the outage; a relay and a worker of one slot run
 * throughout. The ledger (runs per job id, and the order the jobs started) must show every committed
 * job run exactly once, none of the rolled-back ones, and the rows that waited, and those committed
 * behind them, run in the order of their commits. It prints the run's table. And a relay process
 * ({@code OutboxTool relay}) started before its Redis: it waits, and relays once Redis is up.
 *
 * <p>Only in {@code ./mvnw -Pchaos verify} (which sets {@code chaos.size=long}): the minute of
 * outage does not fit the default build, whose {@code OutboxIT} stops Redis for 15 s.
 */
@EnabledIfSystemProperty(named = "chaos.size", matches = "long", disabledReason = "the long chaos run only: ./mvnw -Pchaos verify")
class OutboxChaosIT {
    private static final Duration OUTAGE = Duration.ofMinutes(1);
    private static final Duration BEFORE = Duration.ofSeconds(10);
    private static final Duration AFTER = Duration.ofSeconds(20);
    /** The producer's pause between two transactions. */
    private static final long PACE_MS = 50;
    /**
     * Longer than the outage plus a renewal period: a delivery whose ack the outage holds is not
     * reclaimed, so a second run would be the outbox's, not the broker's at-least-once.
     */
    private static final Duration LEASE = Duration.ofMinutes(2);

    @RegisterExtension
    static final OutboxServers servers = new OutboxServers();

    public record Item(int n) { }

    private enum Phase { BEFORE, DURING, AFTER }

    /**
     * One transaction of the producer: the phase it began its commit (or rollback) in, its jobs' numbers and ids, whether it
     * committed, and when its commit or rollback returned ({@link System#nanoTime()}).
     */
    private record Transaction(Phase phase, List<Integer> numbers, List<UUID> ids, boolean committed, long endedAt) { }

    private final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final List<Integer> startOrder = new CopyOnWriteArrayList<>();
    /** When each job first started ({@link System#nanoTime()}), by its number. */
    private final Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
    private volatile Phase phase = Phase.BEFORE;
    private volatile boolean producing = true;

    @Test
    void redisDownForAMinuteLosesNoCommittedJobRunsNoneTwiceNorAnyRolledBackAndKeepsTheOrderOfCommit() throws Exception {
        String queue = "outbox-chaos-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Item, Void> task = Task.builder("ledger", Item.class).queue(queue).build();
        List<String> relayLog = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(OutboxRelay.class.getName());
        Handler capture = OutboxServers.capture(relayLog);
        logger.addHandler(capture);
        List<Transaction> transactions = new CopyOnWriteArrayList<>();
        RedisServer redis = servers.redis();
        long stoppedAt;
        long backAt;
        long waitingWhenBack;
        long outageRowsGone;
        long failedRounds;
        long relayed;
        long foundStored;
        try (Binomic binomic = client(servers.redis().url(), queue, task);
             OutboxRelay relay = OutboxRelay.builder(binomic, servers.dataSource()).build().start()) {
            binomic.startWorker();
            Outbox outbox = Outbox.of(binomic);
            Thread producer = Thread.ofPlatform().name("outbox-chaos-producer").start(() -> produce(outbox, task, transactions));
            RedisServer.sleep(BEFORE.toMillis());
            redis.stop();
            stoppedAt = System.nanoTime();
            phase = Phase.DURING; // once Redis is down: no transaction of this phase can have been relayed before the outage
            RedisServer.sleep(OUTAGE.toMillis());
            long looked = System.nanoTime();
            Set<String> waiting = waitingJobIds();
            waitingWhenBack = waiting.size();
            outageRowsGone = transactions.stream().filter(t -> t.committed() && t.phase() == Phase.DURING && t.endedAt() < looked)
                    .flatMap(t -> t.ids().stream()).filter(id -> !waiting.contains(id.toString())).count();
            redis.start();
            backAt = System.nanoTime();
            phase = Phase.AFTER;
            RedisServer.sleep(AFTER.toMillis());
            producing = false;
            producer.join(Duration.ofMinutes(1));
            Await.until(Duration.ofMinutes(5), () -> servers.count("") == 0, () -> servers.count("") + " rows still waiting");
            List<UUID> committed = ids(transactions, true);
            Await.until(Duration.ofMinutes(5), () -> committed.stream().allMatch(runs::containsKey),
                    () -> committed.stream().filter(runs::containsKey).count() + " of " + committed.size() + " committed jobs ran");
            RedisServer.sleep(5_000); // a duplicate would be relayed and run within this
            failedRounds = relay.failures();
            relayed = relay.relayed();
            foundStored = relay.duplicates();
        } finally {
            producing = false;
            logger.removeHandler(capture);
        }

        List<UUID> committed = ids(transactions, true);
        Set<UUID> committedSet = new HashSet<>(committed);
        Set<UUID> rolledBack = new HashSet<>(ids(transactions, false));
        long lost = committed.stream().filter(id -> !runs.containsKey(id)).count();
        long ranTwice = runs.values().stream().filter(r -> r.get() > 1).count();
        long rolledBackRan = rolledBack.stream().filter(runs::containsKey).count();
        long strangers = runs.keySet().stream().filter(id -> !committedSet.contains(id) && !rolledBack.contains(id)).count();
        List<Integer> commitOrder = transactions.stream().filter(Transaction::committed).flatMap(t -> t.numbers().stream()).toList();
        int firstOfOutage = transactions.stream().filter(t -> t.committed() && t.phase() != Phase.BEFORE)
                .flatMap(t -> t.numbers().stream()).findFirst().orElse(Integer.MAX_VALUE);
        List<Integer> fromStop = startOrder.stream().filter(n -> n >= firstOfOutage).toList();
        long outOfOrderFromStop = inversions(fromStop);
        long outOfOrder = inversions(startOrder);
        List<Integer> backlog = transactions.stream().filter(t -> t.committed() && t.phase() == Phase.DURING)
                .flatMap(t -> t.numbers().stream()).toList();
        long backlogStarted = backlog.stream().mapToLong(n -> startedAt.getOrDefault(n, Long.MAX_VALUE)).max().orElse(backAt);
        long warnings = relayLog.stream().filter(l -> l.startsWith("WARNING")).count();
        long recoveries = relayLog.stream().filter(l -> l.contains("recovered")).count();

        List<String> table = new ArrayList<>();
        table.add(String.format(Locale.ROOT, "OUTBOX CHAOS RESULT: Redis stopped %.1f s (SHUTDOWN SAVE, then started again); relay"
                + " defaults (batch 500, LISTEN, error backoff 1 s); producer 1 transaction per %d ms + commit, 1-3 jobs each, 1 in 5"
                + " rolled back; worker 1 slot, lease %d s", (backAt - stoppedAt) / 1e9, PACE_MS, LEASE.toSeconds()));
        table.add(String.format(Locale.ROOT, "%-18s %12s %10s %12s %15s %17s", "phase", "transactions", "committed", "rolled back",
                "jobs committed", "jobs rolled back"));
        for (Phase p : Phase.values()) {
            table.add(row(p.name().toLowerCase(Locale.ROOT) + " the outage", transactions.stream().filter(t -> t.phase() == p).toList()));
        }
        table.add(row("all", transactions));
        table.add(String.format(Locale.ROOT, "ledger: committed %d, ran %d, ran twice %d, lost %d, rolled-back jobs that ran %d,"
                        + " jobs never submitted that ran %d, started out of commit order %d (%d among the %d jobs committed from the"
                        + " stop on)", committed.size(), runs.size(), ranTwice, lost, rolledBackRan, strangers, outOfOrder,
                outOfOrderFromStop, fromStop.size()));
        table.add(String.format(Locale.ROOT, "relay: relayed %d, found stored already %d, failed rounds %d; rows waiting when Redis"
                        + " came back %d (of the outage's, %d gone); the last of the %d jobs committed during the outage started %.1f s"
                        + " after; relay log: %d warning(s), %d recovery line(s)", relayed, foundStored, failedRounds, waitingWhenBack,
                outageRowsGone, backlog.size(), (backlogStarted - backAt) / 1e9, warnings, recoveries));
        table.forEach(System.out::println);

        List<String> failures = new ArrayList<>();
        check(failures, lost == 0, lost + " committed job(s) lost");
        check(failures, ranTwice == 0, ranTwice + " job(s) ran twice");
        check(failures, rolledBackRan == 0, rolledBackRan + " rolled-back job(s) ran");
        check(failures, strangers == 0, strangers + " job(s) ran that the producer never submitted");
        check(failures, outOfOrderFromStop == 0, "jobs committed from the stop on started out of commit order: " + outOfOrderFromStop);
        check(failures, fromStop.equals(commitOrder.stream().filter(n -> n >= firstOfOutage).toList()),
                "the jobs committed from the stop on did not start in commit order");
        check(failures, relayed + foundStored == committed.size(), "rows relayed " + relayed + " + found stored " + foundStored
                + " != " + committed.size() + " committed");
        check(failures, failedRounds > 0, "the relay never tried while Redis was down");
        check(failures, outageRowsGone == 0, outageRowsGone + " row(s) committed during the outage left the table before Redis came back");
        check(failures, warnings == 1 && recoveries == 1, "one warning and one recovery line per outage: " + relayLog);
        assertEquals(List.of(), failures, "the table:\n" + String.join("\n", table));
    }

    /**
     * {@code OutboxTool relay} started while its Redis is not running yet: it says READY, warns once that it cannot reach
     * the broker, the rows wait, and once Redis starts it relays them; each committed job runs once, in commit order, and
     * no rolled-back one. (The writer is a client of another Redis: an application whose own Redis is down cannot start its
     * {@code Binomic}, which {@code Outbox.submit} needs.)
     */
    @Test
    void aRelayProcessStartedBeforeItsRedisIsReadyWaitsSayingSoThenRelaysEachCommittedJobOnce() throws Exception {
        String queue = "outbox-late-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Item, Void> task = Task.builder("ledger", Item.class).queue(queue).build();
        List<Transaction> transactions = new ArrayList<>();
        List<String> lines = new CopyOnWriteArrayList<>();
        try (RedisServer late = RedisServer.notStarted(); Binomic writer = client(servers.redis().url(), queue, task)) {
            Outbox outbox = Outbox.of(writer);
            for (int n = 0; n < 20; n++) {
                transactions.add(transaction(outbox, task, n, 1, n % 5 != 4));
            }
            long launched = System.nanoTime();
            Process relay = servers.relayTool(late.url(), Map.of(), lines);
            try {
                Await.until(Duration.ofSeconds(120), () -> lines.stream().anyMatch(l -> l.startsWith("OUTBOX RELAY READY binomic_outbox")),
                        lines::toString);
                long ready = System.nanoTime();
                Await.until(Duration.ofSeconds(60), () -> lines.stream().anyMatch(l -> l.contains("cannot reach the broker at "
                        + late.url() + " yet")), lines::toString);
                phase = Phase.DURING;
                for (int n = 20; n < 40; n++) {
                    transactions.add(transaction(outbox, task, n, 1, n % 5 != 4));
                }
                RedisServer.sleep(5_000); // rounds go on failing; the rows must stay
                long waiting = servers.count("");
                late.start();
                long back = System.nanoTime();
                phase = Phase.AFTER;
                Await.until(Duration.ofSeconds(120), () -> servers.count("") == 0, () -> servers.count("") + " rows waiting: " + lines);
                long empty = System.nanoTime();
                List<UUID> committed = ids(transactions, true);
                try (Binomic worker = client(late.url(), queue, task)) {
                    worker.startWorker();
                    Await.until(Duration.ofSeconds(60), () -> committed.stream().allMatch(runs::containsKey),
                            () -> committed.stream().filter(runs::containsKey).count() + " of " + committed.size() + " ran");
                    RedisServer.sleep(2_000); // a duplicate would run within this
                }
                System.out.println(String.format(Locale.ROOT, "OUTBOX CHAOS RESULT: relay process started with its Redis down:"
                        + " READY %.1f s after launch; %d rows waited %.1f s; table empty %.1f s after Redis started; committed %d, ran"
                        + " %d, rolled back %d; relay output: %d warning line(s), %d 'reached the broker' line(s)",
                        (ready - launched) / 1e9, waiting, (back - ready) / 1e9, (empty - back) / 1e9, committed.size(), runs.size(),
                        ids(transactions, false).size(), lines.stream().filter(l -> l.startsWith("WARNING")).count(),
                        lines.stream().filter(l -> l.contains("reached the broker at " + late.url())).count()));
                assertEquals(committed.size(), waiting, "rows relayed while Redis was not running: " + lines);
                for (UUID id : committed) {
                    assertEquals(1, runs.get(id).get(), "job " + id + " ran " + runs.get(id) + " times");
                }
                assertEquals(committed.size(), runs.size(), "jobs that ran but were never committed");
                assertEquals(transactions.stream().filter(Transaction::committed).flatMap(t -> t.numbers().stream()).toList(), startOrder,
                        "jobs out of commit order");
                assertEquals(1, lines.stream().filter(l -> l.startsWith("WARNING")).count(), "one warning while Redis was down: " + lines);
                assertEquals(1, lines.stream().filter(l -> l.contains("reached the broker at " + late.url())).count(), lines.toString());
                assertTrue(relay.isAlive(), "the relay exited: " + lines);
            } finally {
                relay.destroy();
                assertTrue(relay.waitFor(60, TimeUnit.SECONDS), "the relay did not stop");
            }
        }
    }

    /** A client on {@code brokerUrl} whose worker (once started) runs {@code task} in one slot, writing to the ledger. */
    private Binomic client(String brokerUrl, String queue, Task<Item, Void> task) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(brokerUrl).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).concurrency(1).leaseTimeout(LEASE).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        return Binomic.builder().config(config).handle(task, item -> {
            runs.computeIfAbsent(TaskContext.current().messageId(), id -> new AtomicInteger()).incrementAndGet();
            startOrder.add(item.n());
            startedAt.putIfAbsent(item.n(), System.nanoTime());
            return null;
        }).build().start();
    }

    /**
     * One transaction after another on one thread, so that the order of commit is the order of the rows: 1-3 jobs each,
     * one in five rolled back after its submit. A transaction the database fails is given up (none is expected).
     */
    private void produce(Outbox outbox, Task<Item, Void> task, List<Transaction> into) {
        Random random = new Random(42);
        int next = 0;
        while (producing) {
            int count = 1 + random.nextInt(3);
            try {
                into.add(transaction(outbox, task, next, count, random.nextInt(5) != 0));
            } catch (SQLException e) {
                throw new IllegalStateException("the producer's transaction failed", e);
            }
            next += count;
            RedisServer.sleep(PACE_MS);
        }
    }

    /** Submits jobs {@code from} to {@code from + count - 1} in one transaction, then commits it or rolls it back. */
    private Transaction transaction(Outbox outbox, Task<Item, Void> task, int from, int count, boolean commit) throws SQLException {
        List<Item> items = IntStream.range(from, from + count).mapToObj(Item::new).toList();
        try (Connection c = servers.dataSource().getConnection()) {
            c.setAutoCommit(false);
            List<UUID> ids = outbox.submitAll(c, task, items, SubmitOptions.NONE).stream().map(JobHandle::id).toList();
            Phase at = phase;
            if (commit) {
                c.commit();
            } else {
                c.rollback();
            }
            return new Transaction(at, items.stream().map(Item::n).toList(), ids, commit, System.nanoTime());
        }
    }

    private static List<UUID> ids(List<Transaction> transactions, boolean committed) {
        return transactions.stream().filter(t -> t.committed() == committed).flatMap(t -> t.ids().stream()).toList();
    }

    private static Set<String> waitingJobIds() throws SQLException {
        Set<String> ids = new HashSet<>();
        try (Connection c = servers.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id FROM binomic_outbox")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }

    private static String row(String name, List<Transaction> transactions) {
        long committed = transactions.stream().filter(Transaction::committed).count();
        long jobsCommitted = transactions.stream().filter(Transaction::committed).mapToLong(t -> t.ids().size()).sum();
        long jobsRolledBack = transactions.stream().filter(t -> !t.committed()).mapToLong(t -> t.ids().size()).sum();
        return String.format(Locale.ROOT, "%-18s %12d %10d %12d %15d %17d", name, transactions.size(), committed,
                transactions.size() - committed, jobsCommitted, jobsRolledBack);
    }

    /** Jobs that started after one of a higher number: 0 when {@code order} is ascending. */
    private static long inversions(List<Integer> order) {
        long count = 0;
        int highest = Integer.MIN_VALUE;
        for (int n : order) {
            if (n < highest) {
                count++;
            }
            highest = Math.max(highest, n);
        }
        return count;
    }

    private static void check(List<String> failures, boolean holds, String failure) {
        if (!holds) {
            failures.add(failure);
        }
    }
}
