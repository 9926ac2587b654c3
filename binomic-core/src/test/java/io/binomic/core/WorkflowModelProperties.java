package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.Workflows;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A model-based test of workflow bookkeeping: a random graph of one to six jobs (each depending on
 * a random set of earlier ones, ignoring the failure of some), then random sequences of fetches by
 * three consumers, settlements (success, dead letter, retry, the ack of a job a worker found
 * cancelled) by the owner or late by a former owner, resends, reclaims, due retries moved back,
 * replays of dead letters and a workflow cancel. After every step each job's state in the broker
 * must match a model that evaluates the graph from scratch; a job's entry is never fetched more
 * often than the model put it on the queue (at submit or release, by a moved retry, by a replay),
 * and at the end every entry the model put there is fetched: a held job is enqueued exactly once,
 * never before its dependencies allow. Every broker runs it (memory in core, Redis in binomic-it).
 */
public abstract class WorkflowModelProperties {
    private static final String[] CONSUMERS = {"c0", "c1", "c2"};
    private static final int OPS = 10;

    protected WorkflowModelProperties() {
    }

    protected abstract Broker createBroker();

    protected abstract Scheduler createScheduler(Broker started);

    /** Creates {@code queues} on the started broker; {@code start} again by default, which the memory broker allows. */
    protected void prepare(Broker started, List<String> queues) {
        started.start(queues);
    }

    protected int examples() {
        return 150;
    }

    private Broker broker;
    private Scheduler scheduler;

    @BeforeEach
    void start() {
        broker = createBroker();
        broker.start(List.of());
        scheduler = createScheduler(broker);
    }

    @AfterEach
    void close() {
        scheduler.close();
        broker.close();
    }

    /** The model of one node. */
    static final class Node {
        final String name;
        final List<Integer> deps = new ArrayList<>();
        final Set<Integer> ignored = new HashSet<>();
        NodeState state;
        String owner;
        String receipt;
        int deliveryCount;
        boolean delayed;
        /** Entries the model put on the queue for it, and those fetched. */
        int put;
        int fetched;

        Node(String name) { this.name = name; }
    }

    @Test
    void eachJobIsEnqueuedOnceWhenItsDependenciesAllowInAnyInterleaving() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(examples())
                .forAll(integers().between(1, 6), integers().allPositive(), lists().of(integers().between(0, OPS * 24 - 1)).ofSizeBetween(1, 60))
                .checkAssert((size, seed, ops) -> {
                    cases.incrementAndGet();
                    run(size, seed, ops);
                });
        assertTrue(cases.get() >= examples() * 9 / 10, "only " + cases.get() + " sequences ran");
    }

    /**
     * A sequence the property once found: n3 depends on n0 and on n2, ignoring n2's failure; n0 is dead-lettered (n1,
     * n2 and n3 skipped), replayed and succeeds. The release walks n3 before n2 is held again: n3 must wait for n2.
     */
    @Test
    void aReplayHoldsAgainTheDependencyANodeIgnoresTheFailureOfBeforeTheNodeIsEnqueued() {
        run(4, 488350, List.of(0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 1));
    }

    private void run(int size, int seed, List<Integer> ops) {
        String queue = "wmodel-" + UUID.randomUUID().toString().substring(0, 8);
        prepare(broker, List.of(queue));
        Workflows workflows = BrokerCapabilities.of(broker, Workflows.class);
        DeadLetterStore deadLetters = BrokerCapabilities.deadLetterStore(broker);
        UUID id = UUID.randomUUID();
        Random random = new Random(seed);
        List<Node> model = new ArrayList<>();
        Map<UUID, Node> byJob = new HashMap<>();
        List<NewWorkflow.Node> nodes = new ArrayList<>();
        List<String> trace = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Node n = new Node("n" + i);
            for (int d = 0; d < i; d++) {
                if (random.nextInt(3) == 0) {
                    n.deps.add(d);
                    if (random.nextInt(3) == 0) {
                        n.ignored.add(d);
                    }
                }
            }
            n.state = n.deps.isEmpty() ? NodeState.ENQUEUED : NodeState.WAITING;
            n.put = n.deps.isEmpty() ? 1 : 0;
            Message m = Message.builder().id(UUID.randomUUID()).task(n.name).queue(queue).enqueuedAt(Instant.now())
                    .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(5)).workflow(id).build();
            model.add(n);
            byJob.put(m.id(), n);
            nodes.add(new NewWorkflow.Node(n.name, m, n.deps.stream().map(d -> "n" + d).toList(),
                    new HashSet<>(n.ignored.stream().map(d -> "n" + d).toList())));
            trace.add(n.name + " <- " + n.deps + " ignoring " + n.ignored);
        }
        FlowCounts before = workflows.counts();
        workflows.submitWorkflow(new NewWorkflow(id, Duration.ofMinutes(5), nodes));

        Map<String, List<Delivery>> held = new HashMap<>();
        for (String c : CONSUMERS) {
            held.put(c, new ArrayList<>());
        }
        List<Settlement> sent = new ArrayList<>();
        boolean[] cancelled = {false};
        for (int op : ops) {
            String consumer = CONSUMERS[(op / OPS) % CONSUMERS.length];
            int pick = op / (OPS * CONSUMERS.length);
            List<Delivery> mine = held.get(consumer);
            switch (op % OPS) {
                case 0 -> {
                    List<Delivery> got = fetch(queue, consumer, 1 + pick % 3);
                    took(got, consumer, byJob, trace);
                    mine.addAll(got);
                    trace.add(consumer + " fetch " + got.size());
                }
                case 1, 2, 3, 4 -> {
                    if (mine.isEmpty()) {
                        continue;
                    }
                    Delivery d = mine.remove(pick % mine.size());
                    Settlement s = settlement(op % OPS, d);
                    apply(consumer, s, model, byJob, cancelled[0], trace);
                    sent.add(s);
                }
                case 5 -> {
                    if (sent.isEmpty()) {
                        continue;
                    }
                    trace.add("resend");
                    apply(consumer, sent.get(pick % sent.size()), model, byJob, cancelled[0], trace);
                }
                case 6 -> {
                    List<Delivery> got = broker.reclaim(queue, consumer, Duration.ZERO, 1 + pick % 3);
                    for (Delivery d : got) {
                        Node n = byJob.get(d.message().orElseThrow().id());
                        n.owner = consumer;
                        n.receipt = d.receipt();
                        n.deliveryCount = d.deliveryCount();
                    }
                    mine.addAll(got); // the former owner keeps its stale copy: its settlement must record nothing
                    trace.add(consumer + " reclaim " + got.size());
                }
                case 7 -> {
                    int moved = scheduler.moveDue(queue, Instant.now().plusSeconds(3600), 100);
                    model.forEach(n -> {
                        if (n.delayed) {
                            n.delayed = false;
                            n.put++;
                        }
                    });
                    trace.add("move due " + moved);
                }
                case 8 -> {
                    List<DeadLetter> letters = deadLetters.readDeadLetters(queue, Optional.empty(), 100);
                    if (letters.isEmpty()) {
                        continue;
                    }
                    DeadLetter letter = letters.get(pick % letters.size());
                    assertEquals(1, deadLetters.replayDeadLetters(queue, List.of(letter.id())));
                    Node n = byJob.get(letter.message().orElseThrow().id());
                    n.put++;
                    trace.add("replay " + n.name);
                }
                case 9 -> {
                    if (pick % 4 == 0) {
                        Set<UUID> enqueued = workflows.cancelWorkflow(id).keySet();
                        Set<UUID> expected = new HashSet<>();
                        boolean active = model.stream().anyMatch(n -> n.state.isActive());
                        byJob.forEach((job, n) -> {
                            if (n.state == NodeState.ENQUEUED) {
                                expected.add(job);
                            }
                        });
                        if (active) {
                            cancelled[0] = true;
                            model.forEach(n -> {
                                if (n.state == NodeState.WAITING || n.state == NodeState.SKIPPED) {
                                    n.state = NodeState.CANCELLED;
                                }
                            });
                        }
                        assertEquals(expected, enqueued, "the enqueued jobs a cancel lists: " + trace);
                        trace.add("cancel workflow");
                    }
                }
                default -> throw new AssertionError(op);
            }
            check(workflows, id, model, cancelled[0], before, trace);
        }
        // every entry the model put on the queue is there, once
        scheduler.moveDue(queue, Instant.now().plusSeconds(3600), 100);
        model.forEach(n -> {
            if (n.delayed) {
                n.delayed = false;
                n.put++;
            }
        });
        List<Delivery> rest;
        do {
            rest = fetch(queue, "drain", 100);
            took(rest, "drain", byJob, trace);
        } while (!rest.isEmpty());
        for (Node n : model) {
            assertEquals(n.put, n.fetched, n.name + ": entries put on the queue and fetched: " + trace);
        }
    }

    /** Counts the fresh entries fetched (a first delivery): never more than the model put. */
    private static void took(List<Delivery> got, String consumer, Map<UUID, Node> byJob, List<String> trace) {
        for (Delivery d : got) {
            Node n = byJob.get(d.message().orElseThrow().id());
            n.owner = consumer;
            n.receipt = d.receipt();
            n.deliveryCount = d.deliveryCount();
            if (d.deliveryCount() == 1) {
                n.fetched++;
                assertTrue(n.fetched <= n.put, n.name + " fetched " + n.fetched + " times, put " + n.put + ": " + trace);
            }
        }
    }

    /** Who sent each settlement first: a resend goes out as that consumer. */
    private final Map<Settlement, String> senders = new HashMap<>();

    private static Settlement settlement(int kind, Delivery d) {
        Message m = d.message().orElseThrow();
        JobUpdate succeeded = new JobUpdate(d.queue(), m.id(), Map.of(JobRecords.STATE, "SUCCEEDED"), List.of(), Duration.ZERO, true);
        JobUpdate dead = new JobUpdate(d.queue(), m.id(), Map.of(JobRecords.STATE, "DEAD_LETTERED"), List.of(), Duration.ZERO, true);
        return switch (kind) {
            case 1 -> new Settlement.Ack(d, succeeded);
            case 2 -> new Settlement.DeadLetter(d, new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "boom", "",
                    d.attempt(), Instant.now()), dead);
            case 3 -> new Settlement.RetryLater(d, m.withAttempt(d.attempt() + 1, Instant.now()), Instant.now());
            default -> new Settlement.Ack(d); // a tracked job the worker found cancelled: not run
        };
    }

    private void apply(String consumer, Settlement s, List<Node> model, Map<UUID, Node> byJob, boolean cancelled, List<String> trace) {
        senders.putIfAbsent(s, consumer);
        String sender = senders.get(s);
        Delivery d = s.delivery();
        Node n = byJob.get(d.message().orElseThrow().id());
        boolean current = sender.equals(n.owner) && d.receipt().equals(n.receipt) && d.deliveryCount() <= n.deliveryCount;
        boolean applied = broker.settle(sender, List.of(s)).allApplied();
        trace.add(sender + " " + s.getClass().getSimpleName() + (s.job() == null ? "" : "+job") + " of " + n.name
                + (applied ? " applied" : " refused"));
        assertEquals(current, applied, "a settlement applies exactly when its sender holds the delivery: " + trace);
        if (!applied) {
            return;
        }
        n.owner = null;
        n.receipt = null;
        Batches.Outcome outcome = Batches.outcomeOf(s);
        if (outcome == null) {
            n.delayed = true;
            return;
        }
        NodeState now = switch (outcome) {
            case SUCCEEDED -> NodeState.SUCCEEDED;
            case DEAD_LETTERED -> NodeState.DEAD_LETTERED;
            case CANCELLED -> NodeState.CANCELLED;
        };
        if (n.state == NodeState.ENQUEUED || n.state == NodeState.DEAD_LETTERED && now == NodeState.SUCCEEDED) {
            n.state = now;
            if (!cancelled) {
                evaluate(model);
            }
        }
    }

    /** The graph evaluated from scratch, in order: what a held or skipped node's dependencies make it. */
    private static void evaluate(List<Node> model) {
        for (Node n : model) {
            if (n.state != NodeState.WAITING && n.state != NodeState.SKIPPED) {
                continue;
            }
            boolean ready = true;
            boolean skip = false;
            for (int d : n.deps) {
                NodeState s = model.get(d).state;
                if (s.isActive()) {
                    ready = false;
                } else if (s != NodeState.SUCCEEDED && !n.ignored.contains(d)) {
                    skip = true;
                }
            }
            NodeState next = skip ? NodeState.SKIPPED : ready ? NodeState.ENQUEUED : NodeState.WAITING;
            if (next == NodeState.ENQUEUED) {
                n.put++;
            }
            n.state = next;
        }
    }

    /** The status matches the model, and the broker-wide counts hold this one workflow in the state its status says. */
    private void check(Workflows workflows, UUID id, List<Node> model, boolean cancelled, FlowCounts before, List<String> trace) {
        WorkflowStatus s = workflows.readWorkflow(id).orElseThrow();
        assertEquals(model.stream().map(n -> n.state).toList(), s.nodes().stream().map(WorkflowStatus.Node::state).toList(),
                "node states: " + trace);
        assertEquals(cancelled, s.cancelRequested(), "cancel requested: " + trace);
        WorkflowStatus.State state = s.state();
        assertEquals(BatchesContractTest.plus(before, state == WorkflowStatus.State.RUNNING ? 1 : 0,
                state == WorkflowStatus.State.SUCCEEDED ? 1 : 0, state == WorkflowStatus.State.FAILED ? 1 : 0,
                state == WorkflowStatus.State.CANCELLED ? 1 : 0), workflows.counts(), "the counts, the workflow " + state + ": " + trace);
    }

    private List<Delivery> fetch(String queue, String consumer, int max) {
        try {
            return broker.fetch(List.of(queue), consumer, max, Duration.ofMillis(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
