package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.Binomic;
import io.binomic.it.ChaosReport.Fault;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The chaos suite on a Redis Cluster of 3 masters and 3 replicas ({@link RedisClusterSet}), every
 * write confirmed by a replica ({@code wait.replicas = 1}). Queue {@value ChaosJobs#QUEUE_B} is split
 * into {@value #PARTITIONS} partitions, which spread over the masters; {@value ChaosJobs#QUEUE_A}
 * (with the task under a concurrency limit, which a partitioned queue refuses) and the ticks' queue
 * are not. Besides the worker JVMs and the master that {@link ChaosDriver} kills, freezes and
 * restarts: a Redis master SIGKILLed (its replica promoted, the dead node then back as a replica),
 * a master frozen (SIGSTOP) until its replica is promoted and then thawed (it wakes replaced, with
 * commands queued on its sockets, and becomes a replica), a live {@code redis-cli --cluster reshard} of a partition's slot to another master, and every
 * node's client connections killed. Submissions go on during these faults: a submit either was
 * confirmed by a replica, or failed and is sent again.
 *
 * <p>Batches run among the jobs ({@link ChaosFlows}), checked as in {@link ChaosIT}: each batch's jobs
 * are on {@value ChaosJobs#QUEUE_A} and {@value ChaosJobs#QUEUE_B}'s partitions, its callbacks on
 * {@value ChaosJobs#QUEUE_A}, the batch itself under the broker's flows hash tag, all in different
 * slots; the failovers strike that tag's master too. {@code -D}{@value #WORKFLOWS_PROPERTY}{@code =true}
 * adds workflows, whose bookkeeping shares that slot.
 *
 * <p>Not in the default build: six redis-server processes beside a master, its worker JVMs and the
 * test JVM took 124 s and 186 s for the short size (1,000 jobs over 30 s) on two loaded cores.
 * {@code -Pchaos} runs the long size ({@code -Dchaos.test=ClusterChaosIT} alone: {@code ./mvnw -B verify -Pchaos
 * -pl binomic-it -am -Dchaos.test=ClusterChaosIT -Dchaos.tasks=20000 -Dchaos.minutes=3
 * -Dchaos.seed=42}); {@code -Dchaos.size=short} with {@code -Dtest=ClusterChaosIT} the short one.
 */
@EnabledIfSystemProperty(named = "chaos.size", matches = "long|short", disabledReason = "a chaos run: -Pchaos, or -Dchaos.size=short")
class ClusterChaosIT {
    static final int PARTITIONS = 6;
    static final String WORKFLOWS_PROPERTY = "chaos.flows";
    /** A key under the hash tag of every batch's bookkeeping ({@code ClusterBatches}): the broker's default prefix. */
    private static final String BATCHES_KEY = "binomic:{binomic:flows}:due";

    @Test
    void onAClusterLosingAMasterAndReshardingAPartitionNoMessageIsLostAndEveryDuplicateHasItsFault() throws Exception {
        ChaosDriver.Size size = ChaosDriver.Size.fromSystemProperties();
        new ChaosDriver(new Cluster(RedisClusterSet.start()), size.name().equals("short") ? size.withTasks(1000) : size).run();
    }

    /** The cluster, its faults, and what it says about where the queues are. */
    private static final class Cluster implements ChaosTarget {
        /** The name {@link #placement()} and the faults give the batches' keys among the queues. */
        private static final String BATCHES = "batches";
        private final RedisClusterSet cluster;
        private final String url;
        private final long crossSlotBefore;
        private final List<String> placements = new ArrayList<>();

        Cluster(RedisClusterSet cluster) {
            this.cluster = cluster;
            this.url = cluster.url();
            this.crossSlotBefore = cluster.errors("CROSSSLOT");
        }

        @Override
        public String name() {
            return "cluster-chaos";
        }

        @Override
        public String label() {
            return "CLUSTER CHAOS";
        }

        @Override
        public BrokerConfig broker() {
            return BrokerConfig.builder().url(url).options(Map.of("wait.replicas", "1")).build();
        }

        @Override
        public List<String> redisCycle(ChaosDriver.Size size) {
            return List.of("REDIS_FAILOVER", "REDIS_FREEZE", "REDIS_RESHARD", "CLIENT_KILL");
        }

        @Override
        public boolean pausesSubmissions() {
            return false;
        }

        @Override
        public boolean batches() {
            return true;
        }

        @Override
        public boolean workflows() {
            return Boolean.getBoolean(WORKFLOWS_PROPERTY);
        }

        @Override
        public void prepare(Binomic producer) {
            producer.queues().setPartitions(ChaosJobs.QUEUE_B, PARTITIONS);
            if (workflows() && producer.workflowCounts().isEmpty()) {
                throw new IllegalStateException("-D" + WORKFLOWS_PROPERTY + "=true, but the Cluster's broker offers no workflows");
            }
            placements.add("at the start: " + placement());
        }

        @Override
        public Fault apply(String kind, Random random, ChaosDriver.Size size) {
            long t = System.currentTimeMillis();
            String detail = switch (kind) {
                case "REDIS_FAILOVER" -> {
                    List<String> queues = failoverTargets();
                    String queue = queues.get(random.nextInt(queues.size()));
                    RedisClusterSet.Node killed = cluster.killMasterOf(stream(queue));
                    long promoted = System.currentTimeMillis();
                    cluster.rejoin(killed);
                    yield "SIGKILL of master " + killed + " (of " + queue + "), replica " + cluster.masterOf(stream(queue))
                            + " promoted after " + (promoted - t) + " ms, the killed node back as its replica after "
                            + (System.currentTimeMillis() - promoted) + " ms more";
                }
                case "REDIS_FREEZE" -> {
                    List<String> queues = failoverTargets();
                    String queue = queues.get(random.nextInt(queues.size()));
                    RedisClusterSet.Node frozen = cluster.freezeMasterOf(stream(queue));
                    yield "SIGSTOP of master " + frozen + " (of " + queue + ") until replica " + cluster.masterOf(stream(queue))
                            + " was promoted, then SIGCONT: back as its replica after " + (System.currentTimeMillis() - t) + " ms in all";
                }
                case "REDIS_RESHARD" -> {
                    // redis-cli takes a master's lowest slots first: the partition nearest the start of its master's range moves soonest.
                    String queue = partitions().stream().min(Comparator.comparingInt(q -> cluster.slotsToReshardFor(stream(q))))
                            .orElseThrow();
                    RedisClusterSet.Node from = cluster.masterOf(stream(queue));
                    int slots = cluster.slotsToReshardFor(stream(queue));
                    RedisClusterSet.Node to = cluster.reshardFrom(stream(queue), slots);
                    yield "redis-cli --cluster reshard of " + slots + " slots (" + queue + "'s slot " + cluster.slotOf(stream(queue))
                            + " among them) from " + from + " to " + to;
                }
                case "CLIENT_KILL" -> {
                    long killed = 0;
                    for (RedisClusterSet.Node node : cluster.nodes()) {
                        if (node.alive()) {
                            killed += (Long) cluster.call(node, "CLIENT", "KILL", "TYPE", "normal");
                        }
                    }
                    yield "CLIENT KILL TYPE normal on every node: " + killed + " connections";
                }
                default -> throw new IllegalArgumentException(kind);
            };
            // A frozen master replaced by its replica is a failover too: what it had not replicated is gone.
            return new Fault(kind.equals("REDIS_FREEZE") ? "REDIS_FAILOVER" : kind, 0, t, System.currentTimeMillis(), detail);
        }

        @Override
        public List<String> describe() {
            List<String> lines = new ArrayList<>();
            lines.add("Redis Cluster of 3 masters + 3 replicas, wait.replicas=1; " + ChaosJobs.QUEUE_B + " in " + PARTITIONS
                    + " partitions, " + ChaosJobs.QUEUE_A + " and " + ChaosJobs.TICK_QUEUE + " not partitioned; batches' bookkeeping"
                    + " under its own hash tag (" + BATCHES_KEY + "); workflows " + (workflows() ? "on" : "off"));
            lines.add("slots: " + slots());
            placements.add("at the end: " + placement());
            lines.addAll(placements);
            lines.add("CROSSSLOT errors during the run: " + (cluster.errors("CROSSSLOT") - crossSlotBefore));
            return lines;
        }

        @Override
        public List<String> failures() {
            List<String> failures = new ArrayList<>();
            long crossSlot = cluster.errors("CROSSSLOT") - crossSlotBefore;
            if (crossSlot > 0) {
                failures.add(crossSlot + " CROSSSLOT error(s) on the cluster");
            }
            // A batch whose jobs and callbacks shared the batch's slot would not test what crosses slots.
            if (slots().values().stream().distinct().count() != slots().size()) {
                failures.add("the batches' queues and their bookkeeping share hash slots: " + slots());
            }
            return failures;
        }

        /** Each physical queue's master, and the batches' master, by port. */
        private String placement() {
            Map<String, Integer> where = new LinkedHashMap<>();
            for (String q : failoverTargets()) {
                where.put(q, cluster.masterOf(stream(q)).port());
            }
            return where.toString();
        }

        /** The hash slot of each queue a batch's jobs and callbacks are on, and of the batches' own keys. */
        private Map<String, Long> slots() {
            Map<String, Long> slots = new LinkedHashMap<>();
            slots.put(ChaosJobs.QUEUE_A, cluster.slotOf(stream(ChaosJobs.QUEUE_A)));
            partitions().forEach(q -> slots.put(q, cluster.slotOf(stream(q))));
            slots.put(BATCHES, cluster.slotOf(BATCHES_KEY));
            return slots;
        }

        /** The physical queues and the batches' keys: a failover or freeze strikes the master of one of them. */
        private static List<String> failoverTargets() {
            List<String> all = new ArrayList<>(physicalQueues());
            all.add(BATCHES);
            return all;
        }

        private static List<String> partitions() {
            return IntStream.range(0, PARTITIONS).mapToObj(i -> QueuePartitions.physical(ChaosJobs.QUEUE_B, i)).toList();
        }

        private static List<String> physicalQueues() {
            List<String> all = new ArrayList<>(List.of(ChaosJobs.QUEUE_A, ChaosJobs.TICK_QUEUE));
            all.addAll(partitions());
            return all;
        }

        /** A key in the slot of {@code queue}, or of the batches' keys for {@link #BATCHES}. */
        private static String stream(String queue) {
            return queue.equals(BATCHES) ? BATCHES_KEY : "binomic:{" + queue + "}:stream";
        }

        @Override
        public Broker inspector() {
            return Brokers.redisClusterByUrl(cluster, b -> b);
        }

        @Override
        public void close() {
            cluster.close();
        }
    }
}
