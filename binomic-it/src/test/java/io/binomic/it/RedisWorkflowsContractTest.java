package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import io.binomic.core.WorkflowsContractTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The workflows contract, run against a real Redis; and what a wide join costs the settle script there. */
class RedisWorkflowsContractTest extends WorkflowsContractTest {
    private static final int WIDTH = 300;

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    /**
     * A root, {@value #WIDTH} jobs on it and a join of those: the root's settlement releases the
     * {@value #WIDTH} and evaluates the join once (not once per job released), and each of their
     * settlements reads the join's counts, not its dependencies one each; the join is enqueued once,
     * after the last. Counted as the hash reads Redis ran (INFO commandstats): an evaluation per job
     * released, each reading every dependency, is {@value #WIDTH} squared, 90,000.
     */
    @Test
    void aWideJoinIsEvaluatedOncePerSettlementWithOneReadOfItsDependencies() throws Exception {
        UUID id = UUID.randomUUID();
        List<NewWorkflow.Node> nodes = new ArrayList<>();
        List<String> middle = new ArrayList<>();
        nodes.add(node(id, "root", List.of()));
        for (int i = 0; i < WIDTH; i++) {
            middle.add("m" + i);
            nodes.add(node(id, "m" + i, List.of("root")));
        }
        nodes.add(node(id, "join", middle));
        Workflows workflows = io.binomic.core.BrokerCapabilities.of(broker, Workflows.class);
        workflows.submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), nodes));

        long reads0 = hashReads();
        Delivery root = broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(500)).getFirst();
        assertTrue(broker.settle("c1", List.of(succeeded(root))).allApplied());
        long rootReads = hashReads() - reads0;
        assertTrue(rootReads < 20L * WIDTH, "the root's settlement made " + rootReads + " hash reads");

        List<Delivery> released = new ArrayList<>();
        while (released.size() < WIDTH) {
            released.addAll(broker.fetch(List.of(queue), "c1", WIDTH, Duration.ofMillis(500)));
        }
        long reads1 = hashReads();
        for (Delivery d : released) {
            assertTrue(broker.settle("c1", List.of(succeeded(d))).allApplied());
        }
        long middleReads = hashReads() - reads1;
        assertTrue(middleReads < 20L * WIDTH, "the settlements of the " + WIDTH + " made " + middleReads + " hash reads");

        List<Delivery> last = broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(500));
        assertEquals(List.of("join"), last.stream().map(d -> d.message().orElseThrow().task()).toList(), "the join enqueued once");
        assertEquals(NodeState.ENQUEUED, workflows.readWorkflow(id).orElseThrow().node("join").orElseThrow().state());
        assertEquals(Set.of(), Set.copyOf(broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(100))));
    }

    /** The counts 'u:N' and 'f:N' of the workflow's hash (lib.lua, wf_count); null when the node has none. */
    @Override
    protected boolean readsDependencyCounts() {
        return true;
    }

    @Override
    protected int[] dependencyCounts(UUID workflow, String name) {
        Object u = RedisServer.shared().call("HGET", workflowKey(workflow), "u:" + name);
        Object f = RedisServer.shared().call("HGET", workflowKey(workflow), "f:" + name);
        return u == null || f == null ? null : new int[] {Integer.parseInt(u.toString()), Integer.parseInt(f.toString())};
    }

    /**
     * A workflow as a release before the counts stored it (the same hash without the 'u:' and 'f:'
     * fields and their witness 'cw' and 'cd', written afresh with plain commands) is settled by this one through the same resends,
     * reclaim and replay: it reads every dependency's state instead, and adds no counts.
     */
    @Test
    void aWorkflowStoredWithoutCountsIsReleasedFromItsDependenciesStates() throws Exception {
        List<UUID> stored = new ArrayList<>();
        joinThroughResendsReclaimsAndReplays(id -> {
            stored.add(id);
            String key = workflowKey(id);
            List<?> all = (List<?>) RedisServer.shared().call("HGETALL", key);
            List<String> asBefore = new ArrayList<>(List.of("HSET", key));
            for (int i = 0; i < all.size(); i += 2) {
                String field = all.get(i).toString();
                if (!field.startsWith("u:") && !field.startsWith("f:") && !field.equals("cw") && !field.equals("cd")) {
                    asBefore.add(field);
                    asBefore.add(all.get(i + 1).toString());
                }
            }
            assertEquals(all.size() - 2 * (2 * 5 + 2), asBefore.size() - 2, "two counts for each of the 5 nodes, and the witness");
            RedisServer.shared().call("DEL", key);
            RedisServer.shared().call(asBefore.toArray(String[]::new));
        }, false);
        for (String name : List.of("a", "b", "c", "j", "z")) {
            assertEquals(null, dependencyCounts(stored.getFirst(), name), name + " has no counts added");
        }
    }

    /**
     * A workflow a release before the counts stored (no 'counted' field) stays out of the broker-wide
     * counts when a replay resumes it, as at its end: counting it open then would leave it counted
     * in a state it was never taken from.
     */
    @Test
    void aWorkflowStoredBeforeTheCountsIsLeftOutOfThemWhenAReplayResumesIt() throws Exception {
        UUID id = UUID.randomUUID();
        Workflows workflows = io.binomic.core.BrokerCapabilities.of(broker, Workflows.class);
        workflows.submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), List.of(node(id, "a", List.of()), node(id, "b", List.of("a")))));
        RedisServer.shared().call("HDEL", workflowKey(id), "counted");
        RedisServer.shared().call("HINCRBY", "binomic:flows:counts", "workflow:open", "-1");
        Map<String, String> before = flowCounts();

        Delivery a = broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(500)).getFirst();
        assertTrue(broker.settle("c1", List.of(new Settlement.DeadLetter(a, failure(), new JobUpdate(a.queue(),
                a.message().orElseThrow().id(), Map.of(JobRecords.STATE, "DEAD_LETTERED"), List.of(), Duration.ZERO, true)))).allApplied());
        var store = io.binomic.core.BrokerCapabilities.deadLetterStore(broker);
        assertEquals(1, store.replayDeadLetters(queue, List.of(store.readDeadLetters(queue, java.util.Optional.empty(), 10).getFirst().id())));
        assertTrue(broker.settle("c1", List.of(succeeded(broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(500)).getFirst()))).allApplied());
        assertEquals(NodeState.ENQUEUED, workflows.readWorkflow(id).orElseThrow().node("b").orElseThrow().state(), "the replay resumed it");
        assertEquals(before, flowCounts(), "counted neither open nor in an end state");
        assertTrue(broker.settle("c1", List.of(succeeded(broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(500)).getFirst()))).allApplied());
        assertEquals(before, flowCounts(), "nor at its new end");
    }

    private static Map<String, String> flowCounts() {
        List<?> all = (List<?>) RedisServer.shared().call("HGETALL", "binomic:flows:counts");
        Map<String, String> out = new java.util.TreeMap<>();
        for (int i = 0; i < all.size(); i += 2) {
            out.put(all.get(i).toString(), all.get(i + 1).toString());
        }
        return out;
    }

    private static String workflowKey(UUID id) {
        return "binomic:workflow:{" + id + "}";
    }

    private NewWorkflow.Node node(UUID workflow, String name, List<String> dependsOn) {
        Message m = Message.builder().id(UUID.randomUUID()).task(name).queue(queue).enqueuedAt(Instant.now())
                .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(5)).workflow(workflow).build();
        return new NewWorkflow.Node(name, m, dependsOn, Set.of());
    }

    private static Settlement succeeded(Delivery d) {
        return new Settlement.Ack(d, new JobUpdate(d.queue(), d.message().orElseThrow().id(), Map.of(JobRecords.STATE, "SUCCEEDED"),
                List.of(), Duration.ZERO, true));
    }

    /** The HGET and HMGET calls Redis has run so far, scripts' included. */
    private static long hashReads() {
        return calls("hget") + calls("hmget");
    }

    private static long calls(String command) {
        String stats = String.valueOf(RedisServer.shared().call("INFO", "commandstats"));
        String key = "cmdstat_" + command + ":calls=";
        int from = stats.indexOf(key);
        return from < 0 ? 0 : Long.parseLong(stats.substring(from + key.length(), stats.indexOf(',', from)));
    }
}
