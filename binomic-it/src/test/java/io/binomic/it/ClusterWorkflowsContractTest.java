package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.Workflows;
import io.binomic.core.BrokerCapabilities;
import io.binomic.core.WorkflowsContractTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The workflows contract on a Redis Cluster of 3 masters and 3 replicas, where a workflow and its jobs'
 * queues are in different hash slots; no command may be refused with {@code CROSSSLOT}. Also: a join's
 * two dependencies on queues of two slots settling at the same moment on two workers, a worker that
 * died between a job's settlement and its outcome's application, and an outcome applied twice.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterWorkflowsContractTest extends WorkflowsContractTest {
    @Override
    protected Broker createBroker() {
        return Brokers.redisCluster(RedisClusterSet.shared(), Map.of());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    @Override
    protected boolean readsDependencyCounts() {
        return true;
    }

    @Override
    protected int[] dependencyCounts(UUID workflow, String name) {
        RedisClusterSet cluster = RedisClusterSet.shared();
        String key = workflowKey(workflow);
        Object u = cluster.call(cluster.masterOf(key), "HGET", key, "u:" + name);
        Object f = cluster.call(cluster.masterOf(key), "HGET", key, "f:" + name);
        return u == null || f == null ? null : new int[] {Integer.parseInt(u.toString()), Integer.parseInt(f.toString())};
    }

    private static String workflowKey(UUID id) {
        return "binomic:{binomic:flows}:workflow:{" + id + "}";
    }

    private Workflows workflows() { return BrokerCapabilities.of(broker, Workflows.class); }

    /** A queue whose slot differs from {@code queue}'s and the flows' slot. */
    private String queueOfAnotherSlot() {
        RedisClusterSet cluster = RedisClusterSet.shared();
        long a = cluster.slotOf("{" + queue + "}");
        long flows = cluster.slotOf("{binomic:flows}");
        for (int i = 0; ; i++) {
            String q = queue + "-" + i;
            long slot = cluster.slotOf("{" + q + "}");
            if (slot != a && slot != flows) {
                return q;
            }
        }
    }

    private static NewWorkflow.Node node(UUID workflow, String name, String queue, String... dependsOn) {
        Message m = Message.builder().id(UUID.randomUUID()).task(name).queue(queue).enqueuedAt(Instant.now())
                .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(5)).workflow(workflow).build();
        return new NewWorkflow.Node(name, m, List.of(dependsOn), Set.of());
    }

    private static Settlement ended(Delivery d, String state) {
        JobUpdate update = new JobUpdate(d.queue(), d.message().orElseThrow().id(), Map.of(JobRecords.STATE, state), List.of(),
                Duration.ZERO, true);
        return state.equals("DEAD_LETTERED") ? new Settlement.DeadLetter(d, failure(), update) : new Settlement.Ack(d, update);
    }

    private List<String> tasksOn(String q) throws InterruptedException {
        return broker.fetch(List.of(q), "reader", 100, Duration.ofMillis(100)).stream().map(d -> d.message().orElseThrow().task()).toList();
    }

    /** A workflow whose root is on {@code queue} and two jobs on it on {@code queue} and a queue of another slot, and a join of those. */
    private UUID forkAndJoin(String second) {
        UUID id = UUID.randomUUID();
        workflows().submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), List.of(node(id, "root", queue),
                node(id, "left", queue, "root"), node(id, "right", second, "root"), node(id, "join", queue, "left", "right"))));
        return id;
    }

    @Test
    void aJoinsTwoDependenciesOnQueuesOfTwoSlotsSettledAtOnceOnTwoWorkersEnqueueItOnce() throws Exception {
        String second = queueOfAnotherSlot();
        assertNotEquals(RedisClusterSet.shared().slotOf("{" + queue + "}"), RedisClusterSet.shared().slotOf("{" + second + "}"));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 30; round++) {
                UUID id = forkAndJoin(second);
                Delivery root = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
                assertTrue(broker.settle("w1", List.of(ended(root, "SUCCEEDED"))).allApplied());
                Delivery a = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
                Delivery b = broker.fetch(List.of(second), "w2", 1, Duration.ofMillis(500)).getFirst();
                assertEquals(List.of("left", "right"), List.of(a.message().orElseThrow().task(), b.message().orElseThrow().task()));
                CyclicBarrier together = new CyclicBarrier(2);
                Future<?> fa = pool.submit(() -> {
                    together.await();
                    return broker.settle("w1", List.of(ended(a, "SUCCEEDED")));
                });
                Future<?> fb = pool.submit(() -> {
                    together.await();
                    return broker.settle("w2", List.of(ended(b, "SUCCEEDED")));
                });
                fa.get();
                fb.get();
                assertEquals(List.of("join"), tasksOn(queue), "round " + round + ": the join enqueued once");
                assertEquals(List.of(), tasksOn(second), "round " + round);
                WorkflowStatus status = workflows().readWorkflow(id).orElseThrow();
                assertEquals(NodeState.ENQUEUED, status.node("join").orElseThrow().state(), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The state a worker SIGKILLed right after its settle script leaves: the job settled and its outcome
     * in its queue's workflow outbox, not applied to the workflow. Any worker's sweep (here two brokers',
     * each sweeping once) applies it once: its dependent is enqueued once, and the entry removed.
     */
    @Test
    void aJobSettledByAWorkerThatDiedBeforeApplyingItIsAppliedOnceBySweeps() throws Exception {
        UUID id = UUID.randomUUID();
        workflows().submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), List.of(node(id, "a", queue), node(id, "b", queue, "a"))));
        Delivery d = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
        Message m = d.message().orElseThrow();
        // settled as the dead worker's settle script did it, the application after it never run
        Delivery unflowed = Delivery.of(d.queue(), d.receipt(), m.toBuilder().workflow(null).build(), d.deliveryCount());
        assertTrue(broker.settle("w1", List.of(ended(unflowed, "SUCCEEDED"))).allApplied());
        String outbox = "binomic:{" + queue + "}:workflow-outbox";
        RedisClusterSet cluster = RedisClusterSet.shared();
        cluster.call(cluster.masterOf(outbox), "HSETNX", outbox, id + " " + m.id() + " S", "S");
        assertEquals(List.of(), tasksOn(queue), "not applied yet");
        assertEquals(NodeState.ENQUEUED, workflows().readWorkflow(id).orElseThrow().node("a").orElseThrow().state());

        for (int sweeper = 0; sweeper < 2; sweeper++) {
            try (Broker other = createBroker()) {
                other.start(List.of(queue));
                other.reclaim(queue, "sweeper-" + sweeper, Duration.ofMinutes(5), 10);
            }
        }
        assertEquals(List.of("b"), tasksOn(queue), "b enqueued once");
        WorkflowStatus status = workflows().readWorkflow(id).orElseThrow();
        assertEquals(List.of(NodeState.SUCCEEDED, NodeState.ENQUEUED), status.nodes().stream().map(WorkflowStatus.Node::state).toList());
        assertEquals(0L, cluster.call(cluster.masterOf(outbox), "HLEN", outbox), "the outbox entry is removed once applied");
    }

    /**
     * On a Cluster the workflow learns of a job's outcome after its settlement (the outbox): a job whose
     * own retention is shorter than that gap (here a worker killed between the two, the sweep much later)
     * keeps its record, with its result, for its dependents, and the sweep still applies the outcome.
     */
    @Test
    void aSettledJobsRecordOutlivesItsOwnRetentionUntilItsWorkflowLearnsTheOutcome() throws Exception {
        UUID id = UUID.randomUUID();
        workflows().submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), List.of(node(id, "a", queue), node(id, "b", queue, "a"))));
        Delivery d = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
        Message m = d.message().orElseThrow();
        Delivery unflowed = Delivery.of(d.queue(), d.receipt(), m.toBuilder().workflow(null).build(), d.deliveryCount());
        Duration ownRetention = Duration.ofMillis(200);
        JobUpdate update = new JobUpdate(queue, m.id(), Map.of(JobRecords.STATE, "SUCCEEDED", JobRecords.RESULT, "42"), List.of(),
                ownRetention, true);
        assertTrue(broker.settle("w1", List.of(new Settlement.Ack(unflowed, update))).allApplied());
        String outbox = "binomic:{" + queue + "}:workflow-outbox";
        RedisClusterSet cluster = RedisClusterSet.shared();
        cluster.call(cluster.masterOf(outbox), "HSETNX", outbox, id + " " + m.id() + " S", "S");
        Thread.sleep(ownRetention.multipliedBy(3).toMillis());
        var store = BrokerCapabilities.jobStore(broker);
        assertEquals("42", store.readJob(queue, m.id()).map(r -> r.get(JobRecords.RESULT)).orElse(null),
                "a's record, past its own retention, before its workflow learnt the outcome");
        try (Broker other = createBroker()) {
            other.start(List.of(queue));
            other.reclaim(queue, "sweeper", Duration.ofMinutes(5), 10);
        }
        assertEquals(List.of("b"), tasksOn(queue), "b enqueued by the sweep");
        assertEquals("42", store.readJob(queue, m.id()).map(r -> r.get(JobRecords.RESULT)).orElse(null));
    }

    /**
     * A job's outcome applied to its workflow again (a second forwarder, a sweep after a crash) moves
     * nothing and enqueues nothing; nor does an effect delivered again, left due by a process killed
     * between its delivery and taking it off.
     */
    @Test
    void anOutcomeAppliedAgainAndAnEffectDeliveredAgainEnqueueNothing() throws Exception {
        UUID id = UUID.randomUUID();
        workflows().submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), List.of(node(id, "a", queue), node(id, "b", queue, "a"),
                node(id, "c", queue, "b"))));
        Delivery a = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
        String wfKey = workflowKey(id);
        RedisClusterSet cluster = RedisClusterSet.shared();
        RedisClusterSet.Node flows = cluster.masterOf(wfKey);
        assertTrue(broker.settle("w1", List.of(ended(a, "SUCCEEDED"))).allApplied());
        assertEquals(List.of("b"), tasksOn(queue));

        String outbox = "binomic:{" + queue + "}:workflow-outbox";
        cluster.call(cluster.masterOf(outbox), "HSETNX", outbox, id + " " + a.message().orElseThrow().id() + " S", "S");
        try (Broker other = createBroker()) {
            other.start(List.of(queue));
            other.reclaim(queue, "sweeper", Duration.ofMinutes(5), 10);
        }
        assertEquals(List.of(), tasksOn(queue), "the outcome applied again enqueues nothing");
        assertEquals(List.of(NodeState.SUCCEEDED, NodeState.ENQUEUED, NodeState.WAITING),
                workflows().readWorkflow(id).orElseThrow().nodes().stream().map(WorkflowStatus.Node::state).toList());
        assertEquals(0L, cluster.call(cluster.masterOf(outbox), "HLEN", outbox));

        // b's enqueue due again, as a process killed after delivering it and before taking it off leaves it: first as the
        // version it had, which its record has seen, then as a newer one, which only the once-key stops
        String due = wfKey + ":due";
        String effect = "\"j\":\"" + cluster.call(flows, "HGET", wfKey, "j:b") + "\",\"q\":\"" + queue
                + "\",\"t\":\"b\",\"rk\":\"" + cluster.call(flows, "HGET", wfKey, "rk:b") + "\",\"rt\":\"300000\",\"sk\":\""
                + cluster.call(flows, "HGET", wfKey, "st:b") + "\",\"dl\":\"" + cluster.call(flows, "HGET", wfKey, "dl:b") + "\",\"m\":"
                + quoted(String.valueOf(cluster.call(flows, "HGET", wfKey, "m:b"))) + "}";
        for (int round = 0; round < 2; round++) {
            cluster.call(flows, "HSET", due, "e:b", "{\"st\":\"E\",\"v\":" + (round == 0 ? 1 : 1000) + "," + effect, "n", "1");
            cluster.call(flows, "ZADD", "binomic:{binomic:flows}:wf-due", "1", id.toString());
            try (Broker other = createBroker()) {
                other.start(List.of(queue));
                other.reclaim(queue, "sweeper-" + round, Duration.ofMinutes(5), 10);
            }
            assertEquals(List.of(), tasksOn(queue), "sweep " + round + ": b is not enqueued again");
            assertEquals(0L, cluster.call(flows, "EXISTS", due), "nothing left due after sweep " + round);
            assertEquals(null, cluster.call(flows, "ZSCORE", "binomic:{binomic:flows}:wf-due", id.toString()));
        }
        assertEquals("QUEUED", BrokerCapabilities.jobStore(broker).readJob(queue,
                UUID.fromString(String.valueOf(cluster.call(flows, "HGET", wfKey, "j:b")))).orElseThrow().get(JobRecords.STATE));
    }

    /**
     * An effect whose job's record is gone by the time it is delivered (its own retention ran out: a
     * job cancelled by its id, then its workflow ended) writes no record: a version or an expiry alone
     * would be a record of nothing, kept for ever.
     */
    @Test
    void anEffectOnARecordThatIsGoneWritesNoRecord() throws Exception {
        UUID id = UUID.randomUUID();
        workflows().submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), List.of(node(id, "a", queue))));
        RedisClusterSet cluster = RedisClusterSet.shared();
        String wfKey = workflowKey(id);
        RedisClusterSet.Node flows = cluster.masterOf(wfKey);
        UUID gone = UUID.randomUUID();
        String record = "binomic:{" + queue + "}:job:" + gone;
        String effect = "{\"keep\":\"60000\",\"cr\":\"1\",\"v\":1000,\"j\":\"" + gone + "\",\"q\":\"" + queue
                + "\",\"t\":\"a\",\"rk\":\"" + record + "\",\"rt\":\"300000\",\"sk\":\"binomic:{" + queue + "}:stream\",\"dl\":\"binomic:{"
                + queue + "}:delayed\"}";
        cluster.call(flows, "HSET", wfKey + ":due", "e:a", effect, "n", "1");
        cluster.call(flows, "ZADD", "binomic:{binomic:flows}:wf-due", "1", id.toString());
        try (Broker other = createBroker()) {
            other.start(List.of(queue));
            other.reclaim(queue, "sweeper", Duration.ofMinutes(5), 10);
        }
        assertEquals(0L, cluster.call(flows, "EXISTS", wfKey + ":due"), "delivered");
        assertEquals(0L, cluster.call(cluster.masterOf(record), "EXISTS", record), "no record written");
    }

    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
