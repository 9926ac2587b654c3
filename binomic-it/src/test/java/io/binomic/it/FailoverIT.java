package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.it.TestApp.Job;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The primary is killed (SIGKILL, persistence off, as a lost machine) while a producer
 * submits and two workers drain; the sentinels promote the replica, and the client and the workers,
 * connected through Sentinel with the Redisson YAML file a user would write, carry on without a
 * restart. The ledger lives on a separate Redis, so it survives the failover it measures.
 *
 * <p>Redis replicates asynchronously: what the primary acknowledged but had not yet sent to the
 * replica is gone after the promotion. With {@code wait.replicas = 1} an acknowledged submit has
 * reached the replica, so nothing acknowledged is lost; without it the test measures what is lost.
 * Each run prints one {@code FAILOVER ...} line.
 */
class FailoverIT {
    private static final Duration LEASE = Duration.ofSeconds(3);
    /** Single submits and bulk ones: the bulk path pipelines, so more is in flight at the kill. */
    private static final int BULK = 50;

    private final RedisServer ledgerRedis = RedisServer.shared();
    private RedisSentinelSet sentinels;
    private String queue;
    private Ledger ledger;

    @BeforeEach
    void startSentinelSet() {
        sentinels = RedisSentinelSet.start();
        queue = "failover-" + UUID.randomUUID().toString().substring(0, 8);
        ledger = new Ledger(ledgerRedis.host(), ledgerRedis.port(), queue);
    }

    @AfterEach
    void stopSentinelSet() {
        if (sentinels != null) {
            sentinels.close();
        }
    }

    @Test
    void withWaitReplicasNoAcknowledgedSubmitIsLostInAFailover() {
        Result r = run(Map.of("wait.replicas", "1", "wait.timeout", "1s"), true);

        assertEquals(Set.of(), r.lost(), "acknowledged submits that never ran; " + r);
        assertTrue(r.acknowledgedAfterFailover() > 0, "the client submitted through the new primary: " + r);
    }

    @Test
    void withoutWaitingOnlySubmitsAcknowledgedBeforeTheKillCanBeLost() {
        Result r = run(Map.of(), false);

        // What the old primary acknowledged but had not replicated may be gone (that is what is measured);
        // anything acknowledged after the promotion was written to the new primary and must run.
        for (int n : r.lost()) {
            assertTrue(r.submittedBeforeKill().contains(n), "job " + n + " was submitted after the kill and lost; " + r);
        }
        assertTrue(r.acknowledgedAfterFailover() > 0, "the client submitted through the new primary: " + r);
    }

    /**
     * An ack the promoted replica never got puts the entry back in the pending list of the worker that
     * acked it. That worker remembers settling it, and skipped it on every reclaim (a reclaim racing
     * with its own ack must not run it twice), so a lone worker stranded it until 65,536 later
     * settlements pushed it out of memory. Seen pending again after it was settled, it runs once more
     * instead: a duplicate, the price of at-least-once, never a stranded message.
     */
    @Test
    void anAckLostInAFailoverRunsTheTaskAgainEvenOnTheWorkerThatAckedIt() {
        Map<String, String> options = Map.of("redisson.config", sentinels.writeRedissonYaml().toString());
        Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
        int count = 4;
        List<Binomic> instances = new ArrayList<>();
        try {
            Binomic alone = start(options, job, instances);
            alone.submitAll(job, java.util.stream.IntStream.range(0, count).mapToObj(n -> new Job(n, 2000, 0)).toList());
            alone.startWorker();
            // All four are running (2 s each) before the cut, so all four acks come after it.
            Await.until(Duration.ofSeconds(20), () -> ledger.runs().size() == count, () -> ledger.runs().toString());
            sentinels.stallReplication();
            Await.until(Duration.ofSeconds(20), () -> ledger.done().size() == count && pending(sentinels.primary()) == 0,
                    () -> "acks on the primary: " + ledger.done());

            RedisSentinelSet.Node promoted = sentinels.failover();

            assertEquals(count, pending(promoted), "the acks were lost with the old primary");
            Await.until(Duration.ofSeconds(30), () -> pending(promoted) == 0, () -> "runs " + ledger.runs() + ", pending "
                    + sentinels.call(promoted, "XPENDING", "binomic:{" + queue + "}:stream", "binomic", "-", "+", "10"));
            assertEquals(2L * count, ledger.totalRuns(), "each task ran again once: " + ledger.runs());
        } finally {
            instances.forEach(Binomic::close);
        }
    }

    /**
     * Redis does not replicate its script cache, so a promoted replica has none; Redisson sends
     * pipelined scripts by SHA and never reloads them, so every settle pipeline failed with NOSCRIPT
     * (in one failover run, for 7.7 s: leases lapsed and tasks ran twice). The broker loads its
     * scripts again on NOSCRIPT; the settler's next try goes through.
     */
    @Test
    void aPrimaryThatLostTheScriptCacheGetsTheScriptsAgainAndSettlementsResume() throws Exception {
        RedisSentinelSet.Node primary = sentinels.primary();
        try (io.binomic.api.spi.Broker broker = Brokers.redisProvider().create(BrokerConfig.builder().url(primary.url()).build())) {
            broker.start(List.of(queue));
            for (int i = 0; i < 2; i++) {
                broker.enqueue(io.binomic.api.spi.Message.fromWire(UUID.randomUUID(), "t", queue, 1, java.time.Instant.now(),
                        "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of()));
            }
            List<io.binomic.api.spi.Delivery> fetched = broker.fetch(List.of(queue), "c1", 2, Duration.ofMillis(100));
            broker.settle("c1", List.of(new io.binomic.api.spi.Settlement.Ack(fetched.get(0))));
            sentinels.call(primary, "SCRIPT", "FLUSH"); // what a promoted replica starts with

            List<io.binomic.api.spi.Settlement> ack = List.of(new io.binomic.api.spi.Settlement.Ack(fetched.get(1)));
            try {
                broker.settle("c1", ack);
            } catch (io.binomic.api.BrokerException noScript) {
                assertTrue(noScript.getMessage().contains("NOSCRIPT"), noScript.getMessage());
                broker.settle("c1", ack); // the settler's next try
            }
            assertEquals(0, pending(primary));
        }
    }

    private long pending(RedisSentinelSet.Node node) {
        return (Long) ((List<?>) sentinels.call(node, "XPENDING", "binomic:{" + queue + "}:stream", "binomic")).getFirst();
    }

    record Result(boolean durable, int acknowledged, int failedSubmits, int failedButRan, Set<Integer> lost,
                  long duplicates, int acknowledgedAfterFailover, Set<Integer> submittedBeforeKill, long killToPromotedMillis,
                  long submitOutageMillis) {
        @Override
        public String toString() {
            return "FAILOVER wait=" + durable + ": acknowledged=" + acknowledged + " lost=" + lost.size() + " failedSubmits="
                    + failedSubmits + " failedButRan=" + failedButRan + " duplicates=" + duplicates + " afterFailover="
                    + acknowledgedAfterFailover + " promotedAfterMs=" + killToPromotedMillis + " submitOutageMs="
                    + submitOutageMillis + (lost.isEmpty() ? "" : " lostJobs=" + new TreeSet<>(lost));
        }
    }

    private Result run(Map<String, String> options, boolean rejoin) {
        Path yaml = sentinels.writeRedissonYaml();
        Map<String, String> all = new HashMap<>(options);
        all.put("redisson.config", yaml.toString());
        Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
        Set<Integer> acknowledged = new ConcurrentSkipListSet<>();
        Set<Integer> failed = new ConcurrentSkipListSet<>();
        AtomicInteger next = new AtomicInteger();
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicLong lastFailureNanos = new AtomicLong();
        AtomicLong firstFailureNanos = new AtomicLong();
        List<Binomic> instances = new ArrayList<>();
        try {
            Binomic client = start(all, job, instances);
            start(all, job, instances).startWorker();
            start(all, job, instances).startWorker();
            Thread single = Thread.ofPlatform().name("producer-single").start(() -> {
                while (producing.get()) {
                    int n = next.getAndIncrement();
                    try {
                        client.submit(job, new Job(n, 20, 0));
                        acknowledged.add(n);
                    } catch (RuntimeException e) {
                        failed.add(n);
                        noteFailure(firstFailureNanos, lastFailureNanos);
                    }
                }
            });
            Thread bulk = Thread.ofPlatform().name("producer-bulk").start(() -> {
                while (producing.get()) {
                    List<Job> jobs = new ArrayList<>();
                    for (int i = 0; i < BULK; i++) {
                        jobs.add(new Job(next.getAndIncrement(), 20, 0));
                    }
                    try {
                        client.submitAll(job, jobs);
                        jobs.forEach(j -> acknowledged.add(j.n()));
                    } catch (RuntimeException e) {
                        // A failed bulk submit may have written some chunks: none of them counts as acknowledged.
                        jobs.forEach(j -> failed.add(j.n()));
                        noteFailure(firstFailureNanos, lastFailureNanos);
                    }
                    RedisServer.sleep(20);
                }
            });
            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() >= 300, () -> "warm-up: " + ledger.done().size());

            RedisSentinelSet.Node old = sentinels.primary();
            long killedAt = System.nanoTime();
            sentinels.kill(old);
            // Read once the old primary is dead: a submit numbered before then may still have been
            // acknowledged by it (and lost); one numbered after cannot have been.
            int beforeKill = next.get();
            sentinels.awaitPromotionAfter(old);
            long promotedMillis = (System.nanoTime() - killedAt) / 1_000_000;
            int afterFailover = next.get();
            if (rejoin) {
                // WAIT needs a replica again: the killed node returns, empty, as a replica of the new primary.
                sentinels.rejoin(old);
            }
            // Keep producing until submits have gone through the new primary for a while.
            Await.until(Duration.ofSeconds(40), () -> acknowledged.stream().filter(n -> n >= afterFailover).count() >= 500,
                    () -> "submits after the failover: " + acknowledged.stream().filter(n -> n >= afterFailover).count()
                            + ", failed " + failed.size());
            producing.set(false);
            join(single);
            join(bulk);

            // Lost acks come back through reclaim about one lease later; lost submits never do.
            Set<Integer> expected = Set.copyOf(acknowledged);
            AtomicLong lastProgress = new AtomicLong(System.nanoTime());
            AtomicInteger lastDone = new AtomicInteger();
            try {
                Await.until(Duration.ofSeconds(45), () -> {
                    Set<Integer> done = ledger.done();
                    if (done.size() != lastDone.getAndSet(done.size())) {
                        lastProgress.set(System.nanoTime());
                    }
                    return done.containsAll(expected)
                            || System.nanoTime() - lastProgress.get() > LEASE.multipliedBy(4).toNanos();
                }, () -> "draining");
            } catch (AssertionError timedOut) {
                // reported below as lost
            }
            Set<Integer> done = ledger.done();
            Set<Integer> lost = new TreeSet<>(expected);
            lost.removeAll(done);
            Map<Integer, Long> runs = ledger.runs();
            long duplicates = runs.values().stream().mapToLong(c -> c - 1).sum();
            int failedButRan = (int) failed.stream().filter(runs::containsKey).count();
            Set<Integer> submittedBeforeKill = new TreeSet<>();
            for (int n = 0; n < beforeKill; n++) {
                submittedBeforeKill.add(n);
            }
            long outage = firstFailureNanos.get() == 0 ? 0 : (lastFailureNanos.get() - firstFailureNanos.get()) / 1_000_000;
            Result result = new Result(!options.isEmpty(), expected.size(), failed.size(), failedButRan, lost, duplicates,
                    (int) expected.stream().filter(n -> n >= afterFailover).count(), submittedBeforeKill, promotedMillis, outage);
            System.out.println(result);
            return result;
        } finally {
            producing.set(false);
            instances.forEach(Binomic::close);
        }
    }

    private static void noteFailure(AtomicLong first, AtomicLong last) {
        long now = System.nanoTime();
        first.compareAndSet(0, now);
        last.set(now);
    }

    private Binomic start(Map<String, String> options, Task<Job, Void> job, List<Binomic> instances) {
        BinomicConfig config = BinomicConfig.builder()
                .broker(BrokerConfig.builder().url("redis://sentinel").options(options).build())
                .schedulePeriodicTasks(false)
                .taskDefaults(TaskDefaults.builder().taskTimeout(Duration.ofSeconds(60)).build())
                .worker(WorkerConfig.builder().queues(queue).concurrency(8).leaseTimeout(LEASE)
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic binomic = Binomic.builder().config(config).handle(job, TestApp.handler(ledger)).build();
        instances.add(binomic);
        return binomic.start();
    }

    private static void join(Thread t) {
        try {
            t.join(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
