package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.it.TestApp.Job;
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
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Faults of a Redis Cluster under load (a cluster of its own: these tests kill nodes and move
 * slots). A producer submits (single and bulk) to two queues on two different masters while two
 * workers drain both, all through a Redisson YAML file; the ledger lives on a separate Redis. Each
 * run prints one {@code CLUSTER-FAULT ...} line.
 */
class ClusterFaultIT {
    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final int BULK = 20;
    private static RedisClusterSet cluster;
    private static long crossSlotBefore;
    private final RedisServer ledgerRedis = RedisServer.shared();

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterSet.start();
        crossSlotBefore = cluster.errors("CROSSSLOT");
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            long crossSlot = cluster.errors("CROSSSLOT");
            cluster.close();
            assertEquals(crossSlotBefore, crossSlot, "CROSSSLOT errors on the cluster");
        }
    }

    /**
     * SIGKILL of the master of a live queue (persistence off, as a lost machine): its replica is
     * promoted, producers and workers carry on without a restart, and with {@code wait.replicas = 1}
     * no acknowledged submit is lost. The killed node comes back as a replica, so that WAIT is
     * satisfiable again.
     */
    @Test
    void aKilledMasterIsReplacedByItsReplicaAndWithWaitReplicasNothingAcknowledgedIsLost() {
        Result r = run(Map.of("wait.replicas", "1", "wait.timeout", "1s"), q -> true, victimStream -> {
            RedisClusterSet.Node killed = cluster.killMasterOf(victimStream);
            cluster.rejoin(killed);
            return "killed " + killed + ", now served by " + cluster.masterOf(victimStream);
        });

        assertEquals(Set.of(), r.lost(), "acknowledged submits that never ran; " + r);
        assertTrue(r.acknowledgedAfterFault() > 0, "submits went through after the failover: " + r);
    }

    /**
     * {@code redis-cli --cluster reshard} moves slots, the live queue's among them, to another master
     * (keys migrated with {@code MIGRATE}; clients get {@code ASK} during the move, {@code MOVED}
     * after it). Nothing is lost, nothing stays pending or ready.
     */
    @Test
    void reshardingTheSlotOfALiveQueueToAnotherMasterLosesNothingAndStrandsNothing() {
        // The tool takes a master's lowest slots first: a queue near the start of its master's range moves in a few.
        Result r = run(Map.of(), q -> cluster.slotsToReshardFor(stream(q)) <= 100, victimStream -> {
            RedisClusterSet.Node from = cluster.masterOf(victimStream);
            int slots = cluster.slotsToReshardFor(victimStream);
            RedisClusterSet.Node to = cluster.reshardFrom(victimStream, slots);
            assertEquals(to, cluster.masterOf(victimStream));
            return "resharded " + slots + " slots (the queue's " + cluster.slotOf(victimStream) + " among them) from " + from
                    + " to " + to;
        });

        assertEquals(Set.of(), r.lost(), "acknowledged submits that never ran; " + r);
        assertTrue(r.acknowledgedAfterFault() > 0, "submits went through after the move: " + r);
    }

    /**
     * Redisson ends a pipeline over two masters with a {@code WAIT} on each and reports the sum of
     * their replies, so one master's confirmed replica hid another's silence: a settle batch and a
     * {@code submitAll} spanning two queues passed {@code wait.replicas = 1} with one replica dead.
     * Such writes now go one queue (one master) at a time, and the unconfirmed one fails.
     */
    @Test
    void withWaitReplicasAWriteSpanningTwoMastersFailsWhenOneOfThemHasNoReplica() throws Exception {
        String prefix = "cwait-" + UUID.randomUUID().toString().substring(0, 6);
        List<String> queues = new ArrayList<>();
        List<RedisClusterSet.Node> masters = new ArrayList<>();
        for (int i = 0; queues.size() < 2; i++) {
            String q = prefix + "-" + i;
            RedisClusterSet.Node m = cluster.masterOf(stream(q));
            if (!masters.contains(m)) {
                masters.add(m);
                queues.add(q);
            }
        }
        Map<String, String> options = Map.of("redisson.config", cluster.writeRedissonYaml().toString(),
                "wait.replicas", "1", "wait.timeout", "300ms");
        RedisClusterSet.Node replica = cluster.replicaOf(masters.get(1));
        try (io.binomic.api.spi.Broker broker = Brokers.redisCluster(cluster, options)) {
            broker.start(queues);
            broker.enqueueAll(List.of(message(queues.get(0)), message(queues.get(1))));
            List<io.binomic.api.spi.Delivery> fetched = new ArrayList<>();
            for (String q : queues) {
                fetched.addAll(broker.fetch(List.of(q), "c1", 1, Duration.ofMillis(200)));
            }
            assertEquals(2, fetched.size());

            cluster.kill(replica);
            try {
                var settle = org.junit.jupiter.api.Assertions.assertThrows(io.binomic.api.NotReplicatedException.class,
                        () -> broker.settle("c1", fetched.stream().<io.binomic.api.spi.Settlement>map(
                                io.binomic.api.spi.Settlement.Ack::new).toList()));
                assertTrue(settle.getMessage().contains(queues.get(1)), settle.getMessage());
                var submit = org.junit.jupiter.api.Assertions.assertThrows(io.binomic.api.NotReplicatedException.class,
                        () -> broker.enqueueAll(List.of(message(queues.get(0)), message(queues.get(1)))));
                assertTrue(submit.getMessage().contains("0 of the 1 replicas"), submit.getMessage());
            } finally {
                cluster.rejoin(replica);
            }
        }
    }

    private static io.binomic.api.spi.Message message(String queue) {
        return io.binomic.api.spi.Message.fromWire(UUID.randomUUID(), "t", queue, 1, java.time.Instant.now(),
                "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of());
    }

    record Result(String fault, int acknowledged, int failedSubmits, Set<Integer> lost, long duplicates,
                  int acknowledgedAfterFault, long faultMillis) {
        @Override
        public String toString() {
            return "CLUSTER-FAULT " + fault + ": acknowledged=" + acknowledged + " lost=" + lost.size() + " failedSubmits="
                    + failedSubmits + " duplicates=" + duplicates + " afterFault=" + acknowledgedAfterFault + " faultMs=" + faultMillis
                    + (lost.isEmpty() ? "" : " lostJobs=" + lost);
        }
    }

    private Result run(Map<String, String> options, java.util.function.Predicate<String> victimFits,
                       java.util.function.Function<String, String> fault) {
        String prefix = "cfault-" + UUID.randomUUID().toString().substring(0, 6);
        List<String> queues = new ArrayList<>();
        List<RedisClusterSet.Node> used = new ArrayList<>();
        for (int i = 0; queues.size() < 2; i++) {
            String q = prefix + "-" + i;
            RedisClusterSet.Node m = cluster.masterOf(stream(q));
            if (!used.contains(m) && (!queues.isEmpty() || victimFits.test(q))) {
                used.add(m);
                queues.add(q);
            }
        }
        Ledger ledger = new Ledger(ledgerRedis.host(), ledgerRedis.port(), prefix);
        Map<String, String> all = new HashMap<>(options);
        all.put("redisson.config", cluster.writeRedissonYaml().toString());
        List<Task<Job, Void>> jobs = List.of(TestApp.job("job-a", queues.get(0), Duration.ofMillis(100), null),
                TestApp.job("job-b", queues.get(1), Duration.ofMillis(100), null));
        Set<Integer> acknowledged = new ConcurrentSkipListSet<>();
        Set<Integer> failed = new ConcurrentSkipListSet<>();
        AtomicInteger next = new AtomicInteger();
        AtomicBoolean producing = new AtomicBoolean(true);
        List<Binomic> instances = new ArrayList<>();
        try {
            Binomic client = start(all, queues, jobs, ledger, instances);
            start(all, queues, jobs, ledger, instances).startWorker();
            start(all, queues, jobs, ledger, instances).startWorker();
            Thread single = Thread.ofPlatform().name("producer-single").start(() -> {
                while (producing.get()) {
                    int n = next.getAndIncrement();
                    try {
                        client.submit(jobs.get(n % 2), new Job(n, 10, 0));
                        acknowledged.add(n);
                    } catch (RuntimeException e) {
                        failed.add(n);
                    }
                }
            });
            Thread bulk = Thread.ofPlatform().name("producer-bulk").start(() -> {
                while (producing.get()) {
                    List<Job> batch = new ArrayList<>();
                    for (int i = 0; i < BULK; i++) {
                        batch.add(new Job(next.getAndIncrement(), 10, 0));
                    }
                    try {
                        client.submitAll(jobs.get(batch.getFirst().n() % 2), batch);
                        batch.forEach(j -> acknowledged.add(j.n()));
                    } catch (RuntimeException e) {
                        batch.forEach(j -> failed.add(j.n()));
                    }
                    RedisServer.sleep(20);
                }
            });
            Await.until(Duration.ofSeconds(30), () -> ledger.done().size() >= 200, () -> "warm-up: " + ledger.done().size());

            long faultAt = System.nanoTime();
            String what = fault.apply(stream(queues.getFirst()));
            long faultMillis = (System.nanoTime() - faultAt) / 1_000_000;
            int afterFault = next.get();
            Supplier<Long> ackedAfter = () -> acknowledged.stream().filter(n -> n >= afterFault).count();
            Await.until(Duration.ofSeconds(40), () -> ackedAfter.get() >= 300,
                    () -> "submits after the fault: " + ackedAfter.get() + ", failed " + failed.size());
            producing.set(false);
            join(single);
            join(bulk);

            Set<Integer> expected = Set.copyOf(acknowledged);
            try {
                // a cluster still settling after the fault may answer CLUSTERDOWN for a while: not drained yet
                Await.until(Duration.ofSeconds(60), () -> ledger.done().containsAll(expected) && queues.stream().allMatch(q -> {
                    try {
                        QueueStats s = client.queueStats(q);
                        return s.ready() == 0 && s.pending() == 0 && s.delayed() == 0;
                    } catch (BrokerException notYet) {
                        return false;
                    }
                }), () -> "draining: " + ledger.done().size() + " of " + expected.size() + " done");
            } catch (AssertionError timedOut) {
                // reported below as lost
            }
            Set<Integer> lost = new TreeSet<>(expected);
            lost.removeAll(ledger.done());
            long duplicates = ledger.runs().values().stream().mapToLong(c -> c - 1).sum();
            Result result = new Result(what + (options.isEmpty() ? "" : " " + options), expected.size(), failed.size(), lost,
                    duplicates, (int) (long) ackedAfter.get(), faultMillis);
            System.out.println(result);
            for (String q : queues) {
                QueueStats s = client.queueStats(q);
                assertEquals(0, s.ready() + s.pending() + s.delayed(), "stuck in " + q + ": " + s + "; " + result);
                assertEquals(0, s.deadLetters(), "dead letters in " + q + ": " + s + "; " + result);
            }
            return result;
        } finally {
            producing.set(false);
            instances.forEach(Binomic::close);
        }
    }

    private static String stream(String queue) {
        return "binomic:{" + queue + "}:stream";
    }

    private static Binomic start(Map<String, String> options, List<String> queues, List<Task<Job, Void>> jobs, Ledger ledger,
                                 List<Binomic> instances) {
        BinomicConfig config = BinomicConfig.builder()
                .broker(BrokerConfig.builder().url("redis://cluster").options(options).build())
                .schedulePeriodicTasks(false)
                .taskDefaults(TaskDefaults.builder().taskTimeout(Duration.ofSeconds(60)).build())
                .worker(WorkerConfig.builder().queues(queues.toArray(String[]::new)).concurrency(8).leaseTimeout(LEASE)
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic.Builder builder = Binomic.builder().config(config);
        jobs.forEach(j -> builder.handle(j, TestApp.handler(ledger)));
        Binomic binomic = builder.build();
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
