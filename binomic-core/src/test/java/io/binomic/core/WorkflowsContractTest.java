package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.binomic.api.JobHandle;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.Workflows;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every broker with the {@link Workflows} capability must have: an atomic submit that
 * enqueues only the roots, the bookkeeping of each job's final settlement in the same step as the
 * settlement, and each held job enqueued exactly once when its dependencies allow, whatever the
 * order, the resends and the reclaims; failures skip dependents, a replay resumes them.
 */
public abstract class WorkflowsContractTest extends BrokerContractFixture {

    protected WorkflowsContractTest() {
    }

    private Workflows workflows() { return BrokerCapabilities.of(broker, Workflows.class); }

    /** A workflow under construction: node name to (dependencies, ignored failures); every job on {@code queue}, its task its name. */
    private final class Graph {
        final UUID id = UUID.randomUUID();
        final Map<String, Message> jobs = new LinkedHashMap<>();
        final List<NewWorkflow.Node> nodes = new ArrayList<>();
        /** The retention of the records of the nodes added from now. */
        Duration trackFor = Duration.ofMinutes(5);
        /** How long the workflow's record is kept once it ended. */
        Duration retainFor = Duration.ofMinutes(5);

        Graph node(String name, List<String> dependsOn, Set<String> ignoring, Duration delay) {
            Message m = Message.builder().id(UUID.randomUUID()).task(name).queue(queue).enqueuedAt(Instant.now())
                    .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(trackFor).workflow(id).build();
            jobs.put(name, m);
            nodes.add(delay.isZero() ? new NewWorkflow.Node(name, m, dependsOn, ignoring)
                    : new NewWorkflow.Node(name, m, dependsOn, ignoring, delay));
            return this;
        }

        Graph node(String name, List<String> dependsOn, Set<String> ignoring) { return node(name, dependsOn, ignoring, Duration.ZERO); }

        Graph delayed(String name, Duration delay, String... dependsOn) { return node(name, List.of(dependsOn), Set.of(), delay); }

        Graph node(String name, String... dependsOn) { return node(name, List.of(dependsOn), Set.of()); }

        Graph submit() {
            workflows().submitWorkflow(new NewWorkflow(id, retainFor, nodes));
            return this;
        }

        WorkflowStatus status() { return workflows().readWorkflow(id).orElseThrow(); }

        NodeState state(String name) { return status().node(name).orElseThrow().state(); }

        String record(String name) {
            return BrokerCapabilities.jobStore(broker).readJob(queue, jobs.get(name).id()).orElseThrow().get(JobRecords.STATE);
        }

        boolean hasRecord(String name) { return BrokerCapabilities.jobStore(broker).readJob(queue, jobs.get(name).id()).isPresent(); }
    }

    /** Fetches what is on the queue now, by task name, each once (a name twice fails). */
    private Map<String, Delivery> fetchAll(String consumer) throws InterruptedException {
        Map<String, Delivery> out = new LinkedHashMap<>();
        for (Delivery d : broker.fetch(List.of(queue), consumer, 100, Duration.ofMillis(100))) {
            Delivery before = out.put(d.message().orElseThrow().task(), d);
            assertEquals(null, before, "job " + d.message().orElseThrow().task() + " enqueued twice");
        }
        return out;
    }

    private static JobUpdate ended(Delivery d, String state) {
        return new JobUpdate(d.queue(), d.message().orElseThrow().id(), Map.of(JobRecords.STATE, state), List.of(), Duration.ZERO, true);
    }

    private static Settlement succeeded(Delivery d) { return new Settlement.Ack(d, ended(d, "SUCCEEDED")); }

    private static Settlement dead(Delivery d) { return new Settlement.DeadLetter(d, failure(), ended(d, "DEAD_LETTERED")); }

    private Graph diamond() { return new Graph().node("a").node("b", "a").node("c", "a").node("d", "b", "c"); }

    @Test
    void aSubmitStoresEveryNodeWithItsRecordAndEnqueuesOnlyTheRoots() throws Exception {
        Graph g = diamond().submit();
        assertEquals(Set.of("a"), fetchAll("c1").keySet());
        assertEquals("QUEUED", g.record("a"));
        assertEquals("WAITING", g.record("d"));
        WorkflowStatus s = g.status();
        assertEquals(WorkflowStatus.State.RUNNING, s.state());
        assertEquals(List.of("a", "b", "c", "d"), s.nodes().stream().map(WorkflowStatus.Node::name).toList());
        assertEquals(new WorkflowStatus.Node("d", g.jobs.get("d").id(), queue, "d", NodeState.WAITING, List.of("b", "c")),
                s.node("d").orElseThrow());
        assertEquals(NodeState.ENQUEUED, g.state("a"));
        assertTrue(workflows().readWorkflow(UUID.randomUUID()).isEmpty(), "an unknown workflow has no status");
    }

    @Test
    void aDiamondRunsItsLastJobOnceAfterBothBranchesSettledAtTheSameMoment() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                Graph g = diamond().submit();
                broker.settle("c1", List.of(succeeded(fetchAll("c1").get("a"))));
                Delivery b = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
                Delivery c = broker.fetch(List.of(queue), "w2", 1, Duration.ofMillis(500)).getFirst();
                assertEquals(Set.of("b", "c"), Set.of(b.message().orElseThrow().task(), c.message().orElseThrow().task()));
                assertEquals(NodeState.WAITING, g.state("d"), "round " + round + ": d waits for both");
                CyclicBarrier together = new CyclicBarrier(2);
                Future<?> fb = pool.submit(() -> {
                    together.await();
                    return broker.settle("w1", List.of(succeeded(b)));
                });
                Future<?> fc = pool.submit(() -> {
                    together.await();
                    return broker.settle("w2", List.of(succeeded(c)));
                });
                fb.get();
                fc.get();
                assertEquals(Set.of("d"), fetchAll("c1").keySet(), "round " + round + ": d enqueued once");
                assertEquals("QUEUED", g.record("d"));
                assertEquals(NodeState.ENQUEUED, g.state("d"));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aResentOrStaleSettlementReleasesNothingAgainAndARetryReleasesNothing() throws Exception {
        Graph g = new Graph().node("a").node("b", "a").submit();
        Delivery a = fetchAll("c1").get("a");
        broker.settle("c1", List.of(new Settlement.RetryLater(a, a.message().orElseThrow().withAttempt(2, Instant.now()),
                Instant.now().plusSeconds(600))));
        assertEquals(NodeState.ENQUEUED, g.state("a"), "a retry is not an end");
        assertEquals(NodeState.WAITING, g.state("b"));

        Graph h = new Graph().node("x").node("y", "x").submit();
        Delivery x = fetchAll("c1").get("x");
        Delivery taken = broker.reclaim(queue, "c2", Duration.ZERO, 10).getFirst();
        broker.settle("c1", List.of(dead(x)));
        assertEquals(NodeState.ENQUEUED, h.state("x"), "a stale settlement records nothing");
        Settlement ok = succeeded(taken);
        assertTrue(broker.settle("c2", List.of(ok)).allApplied());
        assertEquals(1, broker.settle("c2", List.of(ok)).notPending().size(), "the resend is not pending");
        assertEquals(Set.of("y"), fetchAll("c1").keySet(), "y enqueued once");
        assertEquals(NodeState.SUCCEEDED, h.state("x"));
    }

    @Test
    void aDeadLetterSkipsItsDependentsTransitivelyAndTheWorkflowFails() throws Exception {
        Graph g = new Graph().node("a").node("b", "a").node("c", "b").node("side").submit();
        java.util.concurrent.LinkedBlockingQueue<io.binomic.api.spi.JobEvent> events = new java.util.concurrent.LinkedBlockingQueue<>();
        AutoCloseable subscription = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add);
        Map<String, Delivery> first = fetchAll("c1");
        broker.settle("c1", List.of(dead(first.get("a")), succeeded(first.get("side"))));
        Set<UUID> ended = new java.util.HashSet<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!ended.containsAll(Set.of(g.jobs.get("b").id(), g.jobs.get("c").id())) && System.nanoTime() < deadline) {
            io.binomic.api.spi.JobEvent e = events.poll(100, java.util.concurrent.TimeUnit.MILLISECONDS);
            if (e != null && e.kind() == io.binomic.api.spi.JobEvent.Kind.ENDED) {
                ended.add(e.id());
            }
        }
        subscription.close();
        assertTrue(ended.containsAll(Set.of(g.jobs.get("b").id(), g.jobs.get("c").id())),
                "the ends of the skipped jobs are published as job events, for their handles: " + ended);

        assertEquals(Map.of(), fetchAll("c1"), "nothing released");
        assertEquals(List.of(NodeState.DEAD_LETTERED, NodeState.SKIPPED, NodeState.SKIPPED, NodeState.SUCCEEDED),
                g.status().nodes().stream().map(WorkflowStatus.Node::state).toList());
        assertEquals("CANCELLED", g.record("b"));
        assertEquals("CANCELLED", g.record("c"));
        assertEquals(WorkflowStatus.State.FAILED, g.status().state());
    }

    @Test
    void aCancelledJobSkipsItsDependentsButOneRunningAnywayOrIgnoringItRuns() throws Exception {
        Graph g = new Graph().node("a").node("b").node("strict", "a", "b")
                .node("tolerant", List.of("a", "b"), Set.of("a"))
                .node("anyway", List.of("a", "b"), Set.of("a", "b")).submit();
        WorkflowStatus before = g.status();
        assertEquals(Set.of(), before.node("strict").orElseThrow().ignoringFailureOf(), "the status says what each does if one fails");
        assertEquals(Set.of("a"), before.node("tolerant").orElseThrow().ignoringFailureOf());
        assertEquals(Set.of("a", "b"), before.node("anyway").orElseThrow().ignoringFailureOf());
        assertEquals(List.of(false, false, true), Stream.of("strict", "tolerant", "anyway")
                .map(n -> before.node(n).orElseThrow().runsAnyway()).toList());
        Map<String, Delivery> first = fetchAll("c1");
        broker.settle("c1", List.of(new Settlement.Ack(first.get("a")))); // tracked, acked unrun: cancelled
        assertEquals(NodeState.CANCELLED, g.state("a"));
        assertEquals(NodeState.SKIPPED, g.state("strict"));
        assertEquals(NodeState.WAITING, g.state("tolerant"), "waits for b");
        broker.settle("c1", List.of(dead(first.get("b"))));

        assertEquals(Set.of("anyway"), fetchAll("c1").keySet(), "only the one that ignores both failures runs");
        assertEquals(NodeState.SKIPPED, g.state("tolerant"), "b's failure is not ignored");
    }

    private void cancelById(Graph g, String name) {
        assertEquals(io.binomic.api.JobHandle.CancelOutcome.CANCELLED, BrokerCapabilities.jobStore(broker).cancelJob(
                io.binomic.core.internal.jobs.JobRecordFormat.cancelledBeforeStart(queue, g.jobs.get(name).id(), Instant.now())));
    }

    /** A held job cancelled by its own id outlives its record's retention: released, it ends cancelled, never enqueued. */
    @Test
    void aHeldJobCancelledByItsOwnIdIsNeverEnqueuedEvenOnceItsRecordExpired() throws Exception {
        Graph g = new Graph();
        g.trackFor = Duration.ofMillis(200);
        g.node("a").node("b", "a").node("c", "b").submit();
        cancelById(g, "b");
        Thread.sleep(500);
        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("a"))));

        assertEquals(Map.of(), fetchAll("c1"), "b was cancelled, and c depends on it");
        assertEquals(List.of(NodeState.SUCCEEDED, NodeState.CANCELLED, NodeState.SKIPPED),
                g.status().nodes().stream().map(WorkflowStatus.Node::state).toList());
        assertEquals("CANCELLED", g.record("b"));
        assertEquals(WorkflowStatus.State.FAILED, g.status().state());
    }

    /** A replay that resumes the dependency of a job cancelled by its own id leaves that job cancelled. */
    @Test
    void aJobCancelledByItsOwnIdStaysCancelledWhenAReplayResumesItsDependency() throws Exception {
        Graph g = new Graph().node("a").node("b", "a").submit();
        cancelById(g, "b");
        broker.settle("c1", List.of(dead(fetchAll("c1").get("a"))));
        assertEquals(NodeState.SKIPPED, g.state("b"));

        var store = BrokerCapabilities.deadLetterStore(broker);
        assertEquals(1, store.replayDeadLetters(queue, List.of(store.readDeadLetters(queue, Optional.empty(), 10).getFirst().id())));
        assertTrue(broker.settle("c1", List.of(succeeded(fetchAll("c1").get("a")))).allApplied());

        assertEquals(Map.of(), fetchAll("c1"), "b was cancelled by its own id");
        assertEquals(List.of(NodeState.SUCCEEDED, NodeState.CANCELLED), g.status().nodes().stream().map(WorkflowStatus.Node::state).toList());
        assertEquals("CANCELLED", g.record("b"));
        assertEquals(WorkflowStatus.State.FAILED, g.status().state());
    }

    @Test
    void aReplayedDeadLetterThatSucceedsResumesTheWorkflow() throws Exception {
        Graph g = new Graph().node("a").node("b", "a").node("c", "b").submit();
        broker.settle("c1", List.of(dead(fetchAll("c1").get("a"))));
        assertEquals(WorkflowStatus.State.FAILED, g.status().state());

        var store = BrokerCapabilities.deadLetterStore(broker);
        String letter = store.readDeadLetters(queue, Optional.empty(), 10).getFirst().id();
        assertEquals(1, store.replayDeadLetters(queue, List.of(letter)));
        Delivery again = fetchAll("c1").get("a");
        assertTrue(broker.settle("c1", List.of(succeeded(again))).allApplied());

        assertEquals(List.of(NodeState.SUCCEEDED, NodeState.ENQUEUED, NodeState.WAITING),
                g.status().nodes().stream().map(WorkflowStatus.Node::state).toList());
        assertEquals(WorkflowStatus.State.RUNNING, g.status().state());
        assertEquals("WAITING", g.record("c"));
        Delivery b = fetchAll("c1").get("b");
        assertEquals("QUEUED", g.record("b"));
        broker.settle("c1", List.of(succeeded(b)));
        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("c"))));
        assertEquals(WorkflowStatus.State.SUCCEEDED, g.status().state());
    }

    /** Whether the broker keeps counts of each node's dependencies that {@link #dependencyCounts} reads (not by default). */
    protected boolean readsDependencyCounts() {
        return false;
    }

    /**
     * The counts the broker keeps of node {@code name}'s dependencies, {unfinished, failed and not
     * ignored}, read from its store; null when the node has none.
     */
    protected int[] dependencyCounts(UUID workflow, String name) {
        return null;
    }

    private void assertCounts(Graph g, String name, int unfinished, int failed, String when) {
        if (readsDependencyCounts()) {
            int[] counts = dependencyCounts(g.id, name);
            assertTrue(counts != null, name + " has no counts " + when);
            assertEquals(List.of(unfinished, failed), List.of(counts[0], counts[1]), name + "'s counts " + when);
        }
    }

    @Test
    void aJoinCountsEachDependencyEndOnceThroughResendsReclaimsAndReplays() throws Exception {
        joinThroughResendsReclaimsAndReplays(id -> { }, true);
    }

    @Test
    void aDependencyNamedTwiceIsWaitedForOnce() throws Exception {
        Graph g = new Graph().node("a").node("b").node("j", List.of("a", "a", "b"), Set.of()).submit();
        Map<String, Delivery> roots = fetchAll("c1");
        assertCounts(g, "j", 2, 0, "at submit");
        assertTrue(broker.settle("c1", List.of(succeeded(roots.get("a")))).allApplied());
        assertEquals(NodeState.WAITING, g.state("j"));
        assertTrue(broker.settle("c1", List.of(succeeded(roots.get("b")))).allApplied());
        assertEquals(Set.of("j"), fetchAll("c1").keySet(), "j enqueued once both ended");
    }

    /**
     * A join j of a, b and c (ignoring c's failure), and z on j, settled through a resent dead letter,
     * a replay of it that succeeds (resent too), an ignored failure and a reclaimed success with its
     * stale first settlement: j is skipped, held again, and enqueued once, after its last dependency;
     * with {@code counted}, the broker's counts are checked at each step. {@code afterSubmit} gets the
     * workflow's id once it is stored (a broker's test rewrites it as an earlier release stored it).
     */
    protected void joinThroughResendsReclaimsAndReplays(java.util.function.Consumer<UUID> afterSubmit, boolean counted)
            throws Exception {
        Graph g = new Graph().node("a").node("b").node("c").node("j", List.of("a", "b", "c"), Set.of("c")).node("z", "j").submit();
        afterSubmit.accept(g.id);
        Map<String, Delivery> roots = fetchAll("c1");
        assertEquals(Set.of("a", "b", "c"), roots.keySet());
        if (counted) {
            assertCounts(g, "j", 3, 0, "at submit");
            assertCounts(g, "z", 1, 0, "at submit");
        }

        Settlement deadA = dead(roots.get("a"));
        assertTrue(broker.settle("c1", List.of(deadA)).allApplied());
        assertEquals(1, broker.settle("c1", List.of(deadA)).notPending().size(), "the resend is not pending");
        assertEquals(NodeState.SKIPPED, g.state("j"));
        assertEquals(NodeState.SKIPPED, g.state("z"));
        if (counted) {
            assertCounts(g, "j", 2, 1, "after a's dead letter and its resend");
            assertCounts(g, "z", 0, 1, "once j is skipped");
        }

        var store = BrokerCapabilities.deadLetterStore(broker);
        assertEquals(1, store.replayDeadLetters(queue, List.of(store.readDeadLetters(queue, Optional.empty(), 10).getFirst().id())));
        Settlement replayed = succeeded(fetchAll("c1").get("a"));
        assertTrue(broker.settle("c1", List.of(replayed)).allApplied());
        assertEquals(1, broker.settle("c1", List.of(replayed)).notPending().size(), "the resend is not pending");
        assertEquals(NodeState.WAITING, g.state("j"), "held again: b and c have not ended");
        assertEquals(NodeState.WAITING, g.state("z"));
        if (counted) {
            assertCounts(g, "j", 2, 0, "after the replay's success and its resend");
            assertCounts(g, "z", 1, 0, "once j is held again");
        }

        assertTrue(broker.settle("c1", List.of(dead(roots.get("c")))).allApplied());
        assertEquals(NodeState.WAITING, g.state("j"), "c's failure is ignored, b has not ended");
        if (counted) {
            assertCounts(g, "j", 1, 0, "after c's ignored failure");
        }

        Delivery taken = broker.reclaim(queue, "c2", Duration.ZERO, 10).getFirst();
        assertEquals("b", taken.message().orElseThrow().task());
        assertEquals(1, broker.settle("c1", List.of(succeeded(roots.get("b")))).reclaimed().size(), "the stale settlement");
        assertEquals(NodeState.WAITING, g.state("j"));
        Settlement b = succeeded(taken);
        assertTrue(broker.settle("c2", List.of(b)).allApplied());
        assertEquals(1, broker.settle("c2", List.of(b)).notPending().size(), "the resend is not pending");
        Map<String, Delivery> joined = fetchAll("c1");
        assertEquals(Set.of("j"), joined.keySet(), "j enqueued once");
        if (counted) {
            assertCounts(g, "j", 0, 0, "once all ended");
            assertCounts(g, "z", 1, 0, "while j is enqueued");
        }

        assertTrue(broker.settle("c1", List.of(succeeded(joined.get("j")))).allApplied());
        assertEquals(Set.of("z"), fetchAll("c1").keySet());
        assertEquals(NodeState.ENQUEUED, g.state("z"));
        if (counted) {
            assertCounts(g, "z", 0, 0, "once j succeeded");
        }
    }

    @Test
    void theBrokerWideCountsMoveOnceWithEachSubmitAndEachEnd() throws Exception {
        FlowCounts before = workflows().counts();
        Graph ok = new Graph().node("ok").submit();
        Graph bad = new Graph().node("bad").node("after", "bad").submit();
        Graph stopped = new Graph().node("stop").node("held", "stop").submit();
        assertEquals(BatchesContractTest.plus(before, 3, 0, 0, 0), workflows().counts(), "three open");

        Map<String, Delivery> first = fetchAll("c1");
        broker.settle("c1", List.of(succeeded(first.get("ok")), dead(first.get("bad"))));
        workflows().cancelWorkflow(stopped.id);
        broker.settle("c1", List.of(new Settlement.Ack(first.get("stop")))); // acked unrun: its record said cancelled
        assertEquals(List.of(WorkflowStatus.State.SUCCEEDED, WorkflowStatus.State.FAILED, WorkflowStatus.State.CANCELLED),
                List.of(ok.status().state(), bad.status().state(), stopped.status().state()));
        assertEquals(BatchesContractTest.plus(before, 0, 1, 1, 1), workflows().counts());

        assertFalse(broker.settle("c1", List.of(succeeded(first.get("ok")), dead(first.get("bad")))).allApplied());
        assertEquals(Map.of(), workflows().cancelWorkflow(stopped.id));
        assertEquals(BatchesContractTest.plus(before, 0, 1, 1, 1), workflows().counts(), "resent settlements, a second cancel count nothing");
    }

    /** A replay that resumes a workflow counts it open again, taken from failed; one that resumes nothing moves it to its new end. */
    @Test
    void aReplayThatSucceedsMovesItsWorkflowInTheCounts() throws Exception {
        Graph chain = new Graph().node("a").node("b", "a").submit();
        Graph leaf = new Graph().node("x").submit();
        Map<String, Delivery> first = fetchAll("c1");
        FlowCounts before = workflows().counts();
        broker.settle("c1", List.of(dead(first.get("a")), dead(first.get("x"))));
        assertEquals(BatchesContractTest.plus(before, -2, 0, 2, 0), workflows().counts());

        var store = BrokerCapabilities.deadLetterStore(broker);
        List<String> letters = store.readDeadLetters(queue, Optional.empty(), 10).stream().map(l -> l.id()).toList();
        assertEquals(2, store.replayDeadLetters(queue, letters));
        Map<String, Delivery> again = fetchAll("c1");
        broker.settle("c1", List.of(succeeded(again.get("a")), succeeded(again.get("x"))));
        assertEquals(WorkflowStatus.State.RUNNING, chain.status().state());
        assertEquals(WorkflowStatus.State.SUCCEEDED, leaf.status().state());
        assertEquals(BatchesContractTest.plus(before, -1, 1, 0, 0), workflows().counts(), "chain open again, leaf succeeded");

        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("b"))));
        assertEquals(BatchesContractTest.plus(before, -2, 2, 0, 0), workflows().counts());
    }

    /**
     * A replay that succeeds in a workflow that ended failed ends it again: the workflow's status and
     * its jobs' records are kept for its retention from that new end, not from the first.
     */
    @Test
    void aReplayThatSucceedsInAnEndedWorkflowKeepsItForItsRetentionFromTheNewEnd() throws Exception {
        Duration retention = Duration.ofSeconds(2);
        Graph g = new Graph();
        g.retainFor = retention;
        g.trackFor = Duration.ofMillis(100);
        g.node("a").node("x").submit();
        Map<String, Delivery> first = fetchAll("c1");
        assertTrue(broker.settle("c1", List.of(succeeded(first.get("a")), dead(first.get("x")))).allApplied());
        Instant firstEnd = Instant.now();
        assertEquals(WorkflowStatus.State.FAILED, g.status().state());
        sleepPast(firstEnd.plus(retention.multipliedBy(3).dividedBy(5)));

        var store = BrokerCapabilities.deadLetterStore(broker);
        assertEquals(1, store.replayDeadLetters(queue, List.of(store.readDeadLetters(queue, Optional.empty(), 10).getFirst().id())));
        Delivery replayed = fetchAll("c1").get("x");
        Instant newEnd = Instant.now();
        assertTrue(broker.settle("c1", List.of(succeeded(replayed))).allApplied());
        sleepPast(firstEnd.plus(retention).plusMillis(300));
        Optional<WorkflowStatus> status = workflows().readWorkflow(g.id);
        boolean recordsKept = g.hasRecord("a") && g.hasRecord("x");
        // only a read made within the retention from the new end can tell (a machine far behind reads too late)
        assumeTrue(Instant.now().isBefore(newEnd.plus(retention)), "read too late to tell");
        assertEquals(Optional.of(WorkflowStatus.State.SUCCEEDED), status.map(WorkflowStatus::state),
                "the status is kept for the retention from the replay's end");
        assertTrue(recordsKept, "its jobs' records are kept with it");
    }

    @Test
    void aCancelStopsHeldAndQueuedJobsAndAnEndedWorkflowIsLeftAsItEnded() throws Exception {
        Graph g = new Graph().node("a").node("b", "a").submit();
        Delivery a = fetchAll("c1").get("a");

        assertEquals(Map.of(g.jobs.get("a").id(), queue), workflows().cancelWorkflow(g.id));
        assertTrue(g.status().cancelRequested());
        assertEquals(NodeState.CANCELLED, g.state("b"));
        assertEquals("CANCELLED", g.record("b"));
        var start = new JobUpdate(queue, g.jobs.get("a").id(), Map.of(JobRecords.STATE, "RUNNING"), List.of(), Duration.ZERO, false);
        assertEquals(Set.of(g.jobs.get("a").id()), BrokerCapabilities.jobStore(broker).startJobs(List.of(start)),
                "an enqueued job of a cancelled workflow does not start");
        broker.settle("c1", List.of(new Settlement.Ack(a)));
        assertEquals(WorkflowStatus.State.CANCELLED, g.status().state());
        assertEquals(Map.of(), fetchAll("c1"));

        Graph done = new Graph().node("x").submit();
        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("x"))));
        WorkflowStatus ended = done.status();
        assertEquals(Map.of(), workflows().cancelWorkflow(done.id));
        assertEquals(ended, done.status(), "cancelling an ended workflow changes nothing");
        assertEquals(WorkflowStatus.State.SUCCEEDED, ended.state());
        assertEquals(Map.of(), workflows().cancelWorkflow(UUID.randomUUID()));
    }

    /**
     * A cancel whose workflow ends between its read of the status and its step on the broker (the last running job settles
     * then) changed nothing, and says so: the workflow ended as its jobs did, and a replay may still resume it.
     */
    @Test
    void aCancelOfAWorkflowThatEndsJustBeforeItSaysAlreadyEnded() throws Exception {
        Graph g = new Graph().node("ok").node("bad").node("after", "bad").submit();
        Map<String, Delivery> first = fetchAll("c1");
        broker.settle("c1", List.of(dead(first.get("bad"))));
        assertEquals(NodeState.SKIPPED, g.state("after"));
        assertEquals(WorkflowStatus.State.RUNNING, g.status().state(), "ok still running");
        Broker settlesOkFirst = new ForwardingBroker(broker) {
            @Override
            public void start(List<String> queues) {
            }

            @Override
            public void close() {
            }

            @Override
            @SuppressWarnings("unchecked")
            public <T> Optional<T> capability(Class<T> type) {
                if (type != Workflows.class) {
                    return broker.capability(type);
                }
                Workflows own = workflows();
                return Optional.of((T) new Workflows() {
                    @Override
                    public void submitWorkflow(NewWorkflow workflow) { own.submitWorkflow(workflow); }

                    @Override
                    public Map<UUID, String> cancelWorkflow(UUID id) {
                        assertTrue(broker.settle("c1", List.of(succeeded(first.get("ok")))).allApplied());
                        return own.cancelWorkflow(id);
                    }

                    @Override
                    public Optional<WorkflowStatus> readWorkflow(UUID id) { return own.readWorkflow(id); }

                    @Override
                    public FlowCounts counts() { return own.counts(); }
                });
            }
        };
        try (Binomic client = Binomic.builder().broker(settlesOkFirst).scheduler(scheduler).build().start()) {
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, client.workflow(g.id).cancel());
        }
        WorkflowStatus after = g.status();
        assertEquals(WorkflowStatus.State.FAILED, after.state());
        assertFalse(after.cancelRequested());
    }

    @Test
    void aJobOfNoWorkflowSettlesAsBefore() throws Exception {
        broker.enqueue(message("t", "{}"));
        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(fetch(1).getFirst()))).allApplied());
    }

    @Test
    void aNodeWithADelayIsDueThatLongAfterItsReleaseOrAfterTheSubmitForARoot() throws Exception {
        Duration delay = Duration.ofMillis(400);
        Graph g = new Graph().node("a").delayed("b", delay, "a").submit();
        Instant released = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("a"))));
        assertEquals(Map.of(), fetchAll("c1"), "b waits for its delay");
        assertEquals(NodeState.ENQUEUED, g.state("b"));
        assertEquals("SCHEDULED", g.record("b"));
        Instant due = scheduler.nextDue(queue).orElseThrow(() -> new AssertionError("b is not in the delayed set"));
        assertTrue(!due.isBefore(released.plus(delay)), "due " + due + ", released " + released);
        sleepPast(due);
        assertEquals(1, scheduler.moveDue(queue, Instant.now(), 10));
        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("b"))));
        assertEquals(WorkflowStatus.State.SUCCEEDED, g.status().state());

        Instant submitted = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Graph root = new Graph().delayed("r", delay).node("s", "r").submit();
        assertEquals(Map.of(), fetchAll("c1"), "a delayed root waits for its delay");
        assertEquals("SCHEDULED", root.record("r"));
        Instant rootDue = scheduler.nextDue(queue).orElseThrow();
        assertTrue(!rootDue.isBefore(submitted.plus(delay)), "due " + rootDue + ", submitted " + submitted);
        sleepPast(rootDue);
        assertEquals(1, scheduler.moveDue(queue, Instant.now(), 10));
        assertEquals(Set.of("r"), fetchAll("c1").keySet());
    }

    @Test
    void aCancelledJobWaitingForItsDelayEndsTheWorkflowWhenItComesDueUnrun() throws Exception {
        Graph g = new Graph().node("a").delayed("b", Duration.ofMillis(300), "a").submit();
        broker.settle("c1", List.of(succeeded(fetchAll("c1").get("a"))));
        UUID b = g.jobs.get("b").id();
        assertEquals(Map.of(b, queue), workflows().cancelWorkflow(g.id));
        var store = BrokerCapabilities.jobStore(broker);
        assertEquals(io.binomic.api.JobHandle.CancelOutcome.CANCELLED,
                store.cancelJob(io.binomic.core.internal.jobs.JobRecordFormat.cancelledBeforeStart(queue, b, Instant.now())));
        assertEquals("CANCELLED", g.record("b"));
        assertEquals(WorkflowStatus.State.RUNNING, g.status().state(), "b is still in the delayed set");
        sleepPast(scheduler.nextDue(queue).orElseThrow());
        assertEquals(1, scheduler.moveDue(queue, Instant.now(), 10));
        Delivery due = fetchAll("c1").get("b");
        var start = new JobUpdate(queue, b, Map.of(JobRecords.STATE, "RUNNING"), List.of(), Duration.ZERO, false);
        assertEquals(Set.of(b), store.startJobs(List.of(start)), "a cancelled job does not start");
        broker.settle("c1", List.of(new Settlement.Ack(due)));
        assertEquals(WorkflowStatus.State.CANCELLED, g.status().state());
    }

    @Test
    void theRecordsOfItsJobsLiveWhileTheWorkflowIsActiveAndForItsRetentionAfter() throws Exception {
        Graph g = new Graph();
        g.trackFor = Duration.ofMillis(300);
        g.node("a").node("b", "a").submit();
        Duration kept = g.trackFor;
        Delivery a = fetchAll("c1").get("a");
        broker.settle("c1", List.of(new Settlement.Ack(a, new JobUpdate(queue, g.jobs.get("a").id(),
                Map.of(JobRecords.STATE, "SUCCEEDED", JobRecords.RESULT, "42"), List.of(), kept, true))));
        Delivery b = fetchAll("c1").get("b");
        sleepPast(Instant.now().plus(kept.multipliedBy(2)));
        assertTrue(g.hasRecord("a"), "a's record, with its result, is kept while the workflow runs, past its own retention");
        broker.settle("c1", List.of(new Settlement.Ack(b, new JobUpdate(queue, g.jobs.get("b").id(),
                Map.of(JobRecords.STATE, "SUCCEEDED"), List.of(), kept, true))));
        assertEquals(WorkflowStatus.State.SUCCEEDED, g.status().state());
        sleepPast(Instant.now().plus(kept.multipliedBy(2)));
        assertTrue(g.hasRecord("a") && g.hasRecord("b"), "the records are kept for the workflow's retention once it ended");
        assertEquals("42", BrokerCapabilities.jobStore(broker).readJob(queue, g.jobs.get("a").id()).orElseThrow().get(JobRecords.RESULT));
    }
}
