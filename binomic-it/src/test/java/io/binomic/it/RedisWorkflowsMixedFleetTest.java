package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import io.binomic.core.BrokerContractFixture;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rolling upgrade from the last release, {@code 102942e}, whose workers keep no dependency counts
 * ('u:N', 'f:N'), beside this code's producer and workers, which do: workflows submitted by this
 * code, some of their jobs settled the way a worker of that release settles them. Its workflow step
 * is its own {@code wf_settled}, run with EVAL from {@code lib-102942e.lua}, that release's
 * {@code lib.lua} unchanged ({@code git show 102942e:binomic-redis/src/main/resources/io/binomic/redis/internal/lib.lua}),
 * after its settle script's other effects on such a job: the record's end and the XACK. Every node
 * runs once, when its dependencies allow, whichever worker settles what and in which order.
 */
class RedisWorkflowsMixedFleetTest extends BrokerContractFixture {
    private static final String OLD_SETTLE = oldSettleScript();

    private final Map<String, Message> jobs = new LinkedHashMap<>();
    private final Map<String, List<String>> dependencies = new HashMap<>();
    private final UUID id = UUID.randomUUID();

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    /** The old worker settles one branch of a diamond, a new one the other after it: the join runs once. */
    @ParameterizedTest
    @ValueSource(strings = {"b", "c"})
    void aJoinRunsWhenAnOldWorkerSettledOneBranchBeforeANewOneSettledTheOther(String byOld) throws Exception {
        diamond();
        settleNew(only("a"), true);
        Map<String, Delivery> branches = byTask(fetchAll(2));
        settleOld(branches.get(byOld), "S");
        settleNew(branches.get(byOld.equals("b") ? "c" : "b"), true);
        assertEquals(NodeState.ENQUEUED, status().node("d").orElseThrow().state(), "d released");
        settleNew(only("d"), true);
        assertEquals(WorkflowStatus.State.SUCCEEDED, status().state());
        assertEquals(List.of(), fetch(10), "nothing ran twice");
    }

    /** A new worker settles first, the old one last: the old one releases the join from the states. */
    @Test
    void aJoinRunsWhenTheOldWorkerSettlesLast() throws Exception {
        diamond();
        settleNew(only("a"), true);
        Map<String, Delivery> branches = byTask(fetchAll(2));
        settleNew(branches.get("b"), true);
        settleOld(branches.get("c"), "S");
        settleNew(only("d"), true);
        assertEquals(WorkflowStatus.State.SUCCEEDED, status().state());
        assertEquals(List.of(), fetch(10));
    }

    /** The old worker settles the root, new ones the rest: each branch released once, the join once. */
    @Test
    void aJoinRunsWhenTheOldWorkerSettledTheRoot() throws Exception {
        diamond();
        settleOld(only("a"), "S");
        Map<String, Delivery> branches = byTask(fetchAll(2));
        settleNew(branches.get("b"), true);
        settleNew(branches.get("c"), true);
        settleNew(only("d"), true);
        assertEquals(WorkflowStatus.State.SUCCEEDED, status().state());
        assertEquals(List.of(), fetch(10));
    }

    /** A branch dead-lettered by the old worker skips the join when a new one settles the other. */
    @Test
    void aJoinIsSkippedWhenTheOldWorkerDeadLetteredABranch() throws Exception {
        diamond();
        settleNew(only("a"), true);
        Map<String, Delivery> branches = byTask(fetchAll(2));
        settleOld(branches.get("b"), "D");
        settleNew(branches.get("c"), true);
        assertEquals(NodeState.SKIPPED, status().node("d").orElseThrow().state());
        assertEquals(WorkflowStatus.State.FAILED, status().state());
        assertEquals(List.of(), fetch(10), "d not enqueued");
    }

    /**
     * Two failures skip a join; the old worker settles the replay of one (a step that leaves 'active'
     * as it was: the join stays skipped by the other), a new one the replay of the other: the join runs.
     */
    @Test
    void aJoinResumesWhenTheOldWorkerSettledTheReplayOfOneOfItsTwoFailures() throws Exception {
        node("y1").node("y2").node("x", "y1", "y2").submit();
        Map<String, Delivery> roots = byTask(fetchAll(2));
        settleNew(roots.get("y1"), false);
        settleNew(roots.get("y2"), false);
        assertEquals(NodeState.SKIPPED, status().node("x").orElseThrow().state());

        settleOld(replay("y1"), "S");
        assertEquals(NodeState.SKIPPED, status().node("x").orElseThrow().state(), "y2 still failed");
        settleNew(replay("y2"), true);
        assertEquals(NodeState.ENQUEUED, status().node("x").orElseThrow().state(), "both failures replayed");
        settleNew(only("x"), true);
        assertEquals(WorkflowStatus.State.SUCCEEDED, status().state());
    }

    /** The new code alone keeps the counts and their witness, and decides from them. */
    @Test
    void aWorkflowOfTheNewCodeAloneKeepsItsCounts() throws Exception {
        diamond();
        settleNew(only("a"), true);
        Map<String, Delivery> branches = byTask(fetchAll(2));
        settleNew(branches.get("b"), true);
        assertEquals("1", hget("u:d"));
        assertEquals("2", hget("cw"));
        settleNew(branches.get("c"), true);
        assertEquals("0", hget("u:d"));
    }

    private void diamond() {
        node("a").node("b", "a").node("c", "a").node("d", "b", "c").submit();
    }

    private RedisWorkflowsMixedFleetTest node(String name, String... dependsOn) {
        Message m = Message.builder().id(UUID.randomUUID()).task(name).queue(queue).enqueuedAt(Instant.now())
                .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(5)).workflow(id).build();
        jobs.put(name, m);
        dependencies.put(name, List.of(dependsOn));
        return this;
    }

    private void submit() {
        List<NewWorkflow.Node> nodes = new ArrayList<>();
        jobs.forEach((name, m) -> nodes.add(new NewWorkflow.Node(name, m, dependencies.get(name), Set.of())));
        BrokerCapabilities.of(broker, Workflows.class).submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), nodes));
    }

    private WorkflowStatus status() {
        return BrokerCapabilities.of(broker, Workflows.class).readWorkflow(id).orElseThrow();
    }

    private List<Delivery> fetchAll(int n) throws InterruptedException {
        List<Delivery> out = new ArrayList<>();
        for (int i = 0; i < 20 && out.size() < n; i++) {
            out.addAll(fetch(n - out.size()));
        }
        assertEquals(n, out.size(), "enqueued: " + out);
        return out;
    }

    private Delivery only(String task) throws InterruptedException {
        List<Delivery> one = fetchAll(1);
        assertEquals(task, one.getFirst().message().orElseThrow().task());
        return one.getFirst();
    }

    private static Map<String, Delivery> byTask(List<Delivery> deliveries) {
        Map<String, Delivery> out = new HashMap<>();
        deliveries.forEach(d -> out.put(d.message().orElseThrow().task(), d));
        return out;
    }

    private Delivery replay(String name) throws InterruptedException {
        var store = BrokerCapabilities.deadLetterStore(broker);
        var letter = store.readDeadLetters(queue, Optional.empty(), 10).stream()
                .filter(l -> l.message().map(m -> m.task().equals(name)).orElse(false)).findFirst().orElseThrow();
        assertEquals(1, store.replayDeadLetters(queue, List.of(letter.id())));
        return only(name);
    }

    private void settleNew(Delivery d, boolean succeeded) {
        JobUpdate end = new JobUpdate(d.queue(), d.message().orElseThrow().id(),
                Map.of(JobRecords.STATE, succeeded ? "SUCCEEDED" : "DEAD_LETTERED"), List.of(), Duration.ZERO, true);
        Settlement s = succeeded ? new Settlement.Ack(d, end) : new Settlement.DeadLetter(d, failure(), end);
        assertTrue(broker.settle("c1", List.of(s)).allApplied());
    }

    /** Settles d as a worker of 102942e does: outcome S or D (a dead letter's copy in the DLQ left out). */
    private void settleOld(Delivery d, String outcome) {
        RedisServer.shared().call("EVAL", OLD_SETTLE, "1", workflowKey(), d.message().orElseThrow().id().toString(), outcome,
                outcome.equals("S") ? "SUCCEEDED" : "DEAD_LETTERED", d.receipt());
    }

    private String hget(String field) {
        Object v = RedisServer.shared().call("HGET", workflowKey(), field);
        return v == null ? null : v.toString();
    }

    private String workflowKey() {
        return "binomic:workflow:{" + id + "}";
    }

    private static String oldSettleScript() {
        try (InputStream in = RedisWorkflowsMixedFleetTest.class.getResourceAsStream("lib-102942e.lua")) {
            String lib = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .replace("{{DEFAULT_PRIORITY}}", "5").replace("{{GROUP}}", "binomic");
            return lib + """
                    local wf, job, outcome = KEYS[1], ARGV[1], ARGV[2]
                    local name = redis.call('HGET', wf, 'job:' .. job)
                    redis.call('HSET', redis.call('HGET', wf, 'rk:' .. name), 'state', ARGV[3])
                    redis.call('XACK', redis.call('HGET', wf, 'st:' .. name), 'binomic', ARGV[4])
                    wf_settled(wf, job, outcome)
                    return 1
                    """;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
