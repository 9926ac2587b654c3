package io.binomic.it;

import io.binomic.api.Backoff;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskHandler;
import io.binomic.api.spi.Message;
import io.binomic.core.BatchBuilder;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import io.binomic.it.ChaosFlowCheck.PlannedBatch;
import io.binomic.it.ChaosFlowCheck.PlannedWorkflow;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;

/**
 * The batches and workflows of a {@link ChaosDriver} run, beside its plain jobs and under the same
 * faults: batches of 20-50 small jobs on the two job queues, some failing once or twice
 * before they succeed, with {@code onSuccess} and {@code onComplete} callbacks, and every third
 * batch with a job that is dead-lettered and an {@code onDeath} callback; and workflows, diamonds
 * ({@code a -> b, c -> d}) and chains ({@code a -> b -> c}), their nodes on either queue. Their
 * executions go to a {@link ChaosFlowLedger}; {@link ChaosFlowCheck} judges them at the end.
 * A target without workflows ({@link ChaosTarget#workflows()}: a Redis Cluster) runs the batches alone.
 */
final class ChaosFlows {
    static final String FLOW_A = "chaos-flow-a";
    static final String FLOW_B = "chaos-flow-b";
    /** Always fails: dead-lettered after its {@value #DOOMED_ATTEMPTS} attempts. */
    static final String DOOMED = "chaos-flow-doomed";
    static final int DOOMED_ATTEMPTS = 2;
    static final String CALLBACK = "chaos-flow-callback";
    /** Callbacks are steps named after their kind: {@code cb-SUCCESS}, {@code cb-COMPLETE}, {@code cb-DEATH}. */
    static final String CALLBACK_PREFIX = "cb-";

    /**
     * One step of a batch or a workflow (no field named {@code n}: the driver reads job numbers out
     * of dead letters by that name).
     *
     * @param flow the driver's name of the batch or workflow ({@code b3}, {@code w7})
     * @param node the job's name in it ({@code j12}, {@code doomed}, {@code a}, or {@code cb-KIND} for a callback)
     * @param failures how many executions fail before one succeeds
     */
    record Step(String flow, String node, long sleepMillis, int failures) { }

    static List<Task<?, ?>> definitions() {
        return List.of(step(FLOW_A, ChaosJobs.QUEUE_A, 5), step(FLOW_B, ChaosJobs.QUEUE_B, 5),
                step(DOOMED, ChaosJobs.QUEUE_B, DOOMED_ATTEMPTS), step(CALLBACK, ChaosJobs.QUEUE_A, 5));
    }

    private static Task<Step, Void> step(String name, String queue, int attempts) {
        return Task.builder(name, Step.class).queue(queue).maxAttempts(attempts).backoff(Backoff.fixed(ChaosJobs.BACKOFF)).build();
    }

    @SuppressWarnings("unchecked")
    static List<TaskBinding<?, ?>> tasks(ChaosFlowLedger ledger) {
        TaskHandler<Step, Void> handler = step -> {
            ledger.started(step);
            Thread.sleep(step.sleepMillis());
            if (io.binomic.api.TaskContext.current().attempt() <= step.failures()) {
                ledger.failing();
                throw new IllegalStateException("planned failure of " + step);
            }
            ledger.finished();
            return null;
        };
        return definitions().stream().<TaskBinding<?, ?>>map(t -> ((Task<Step, Void>) t).handledBy(handler)).toList();
    }

    private final Path ledgerDir;
    private final int batches;
    private final int workflows;
    private final List<PlannedBatch> plannedBatches = new CopyOnWriteArrayList<>();
    private final List<PlannedWorkflow> plannedWorkflows = new CopyOnWriteArrayList<>();
    private final Set<String> resubmitted = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * As many batches and workflows as {@code tasks} plain jobs warrant: in the short run (2,000) 8
     * and 10, about 300 jobs; no workflow unless {@code workflows}.
     */
    ChaosFlows(Path ledgerDir, int tasks, boolean workflows) {
        this.ledgerDir = ledgerDir;
        this.batches = Math.max(3, tasks / 250);
        this.workflows = workflows ? Math.max(3, tasks / 200) : 0;
    }

    /** A thread submitting {@code flows}' batches and workflows (none when it is null); a failure is added to {@code problems}. */
    static Thread submitting(ChaosFlows flows, Binomic client, Random random, long from, long to, Lock submitting,
                             List<String> problems) {
        return Thread.ofPlatform().name("chaos-flows").start(() -> {
            try {
                if (flows != null) {
                    flows.submit(client, random, from, to, submitting);
                }
            } catch (RuntimeException e) {
                problems.add("the batch and workflow submitter gave up: " + e);
            }
        });
    }

    /** Submits the batches and workflows spread over {@code from..to}, each under {@code submitting} (held while Redis is faulted). */
    @SuppressWarnings("unchecked")
    void submit(Binomic client, Random random, long from, long to, Lock submitting) {
        Task<Step, Void> a = (Task<Step, Void>) client.tasks().find(FLOW_A).orElseThrow();
        Task<Step, Void> b = (Task<Step, Void>) client.tasks().find(FLOW_B).orElseThrow();
        Task<Step, Void> doomed = (Task<Step, Void>) client.tasks().find(DOOMED).orElseThrow();
        Task<Step, Void> callback = (Task<Step, Void>) client.tasks().find(CALLBACK).orElseThrow();
        int events = batches + workflows;
        int batch = 0;
        int workflow = 0;
        for (int i = 0; i < events; i++) {
            long at = from + (to - from) * i / events;
            long wait = at - System.currentTimeMillis();
            if (wait > 0) {
                ChaosDriver.sleep(wait);
            }
            boolean isBatch = workflow >= workflows || batch < batches && random.nextInt(events - i) < batches - batch;
            submitting.lock();
            try {
                if (isBatch) {
                    submitBatch(client, random, "b" + batch++, a, b, doomed, callback);
                } else {
                    submitWorkflow(client, random, "w" + workflow++, a, b);
                }
            } finally {
                submitting.unlock();
            }
        }
    }

    private void submitBatch(Binomic client, Random random, String flow, Task<Step, Void> a, Task<Step, Void> b,
                             Task<Step, Void> doomed, Task<Step, Void> callback) {
        int size = 20 + random.nextInt(31);
        List<Step> steps = new ArrayList<>();
        List<Boolean> onA = new ArrayList<>();
        for (int j = 0; j < size; j++) {
            steps.add(new Step(flow, "j" + j, 5 + random.nextInt(36), random.nextInt(5) == 0 ? 1 + random.nextInt(2) : 0));
            onA.add(random.nextBoolean());
        }
        boolean death = plannedBatches.size() % 3 == 2;
        for (int tries = 1; ; tries++) {
            BatchBuilder builder = client.batch();
            for (int j = 0; j < size; j++) {
                builder.add(onA.get(j) ? a : b, steps.get(j));
            }
            if (death) {
                builder.add(doomed, new Step(flow, "doomed", 5, Integer.MAX_VALUE));
                builder.onDeath(callback, new Step(flow, CALLBACK_PREFIX + "DEATH", 5, 0));
            }
            builder.onSuccess(callback, new Step(flow, CALLBACK_PREFIX + "SUCCESS", 5, 0))
                    .onComplete(callback, new Step(flow, CALLBACK_PREFIX + "COMPLETE", 5, 0));
            List<String> jobs = new ArrayList<>(steps.stream().map(Step::node).toList());
            if (death) {
                jobs.add("doomed");
            }
            try {
                builder.submit();
                plannedBatches.add(new PlannedBatch(builder.id(), flow, jobs, death));
                return;
            } catch (RuntimeException e) {
                // The batch's id is known before its submit: ask whether the failed submit stored it after all.
                if (stored(client, builder.id())) {
                    plannedBatches.add(new PlannedBatch(builder.id(), flow, jobs, death));
                    return;
                }
                if (tries == 60) {
                    throw e;
                }
                ChaosDriver.log("batch " + flow + " not submitted (" + e + "); again in 0.5 s");
                ChaosDriver.sleep(500);
            }
        }
    }

    private static boolean stored(Binomic client, UUID id) {
        for (int tries = 1; ; tries++) {
            try {
                return client.batch(id).status().isPresent();
            } catch (RuntimeException e) {
                if (tries == 60) {
                    throw e;
                }
                ChaosDriver.sleep(500);
            }
        }
    }

    private void submitWorkflow(Binomic client, Random random, String flow, Task<Step, Void> a, Task<Step, Void> b) {
        Map<String, List<String>> nodes = new LinkedHashMap<>();
        if (random.nextBoolean()) {
            nodes.put("a", List.of());
            nodes.put("b", List.of("a"));
            nodes.put("c", List.of("a"));
            nodes.put("d", List.of("b", "c"));
        } else {
            nodes.put("a", List.of());
            nodes.put("b", List.of("a"));
            nodes.put("c", List.of("b"));
        }
        Workflow.Builder builder = Workflow.builder();
        nodes.forEach((name, deps) -> {
            Step step = new Step(flow, name, 5 + random.nextInt(36), random.nextInt(6) == 0 ? 1 : 0);
            Task<Step, Void> task = random.nextBoolean() ? a : b;
            if (deps.isEmpty()) {
                builder.add(name, task, step);
            } else {
                builder.add(name, task, step, Workflow.dependsOn(deps.toArray(String[]::new)));
            }
        });
        Workflow workflow = builder.build();
        for (int tries = 1; ; tries++) {
            try {
                plannedWorkflows.add(new PlannedWorkflow(client.submit(workflow).id(), flow, nodes));
                return;
            } catch (RuntimeException e) {
                // A workflow's id is drawn at its submit: one that failed may have been stored, and then runs too.
                resubmitted.add(flow);
                if (tries == 60) {
                    throw e;
                }
                ChaosDriver.log("workflow " + flow + " not submitted (" + e + "); again in 0.5 s");
                ChaosDriver.sleep(500);
            }
        }
    }

    /** Every batch's onComplete callback and every workflow's every node completed. */
    boolean done() {
        Set<String> completed = new HashSet<>();
        for (ChaosFlowLedger.Run run : ChaosFlowLedger.read(ledgerDir)) {
            if (run.completed()) {
                completed.add(run.group() + " " + run.node());
            }
        }
        return plannedBatches.stream().allMatch(p -> completed.contains(p.id() + " " + CALLBACK_PREFIX + "COMPLETE"))
                && plannedWorkflows.stream().allMatch(p -> p.nodes().keySet().stream().allMatch(n -> completed.contains(p.id() + " " + n)));
    }

    /** The verdict on what ran, with the dead letters and the workflows' states read through {@code client}. */
    ChaosFlowCheck check(Binomic client, Function<List<ChaosLedger.Run>, ChaosReport.Fault> cause) {
        Set<UUID> dead = new HashSet<>();
        for (String queue : List.of(ChaosJobs.QUEUE_A, ChaosJobs.QUEUE_B)) {
            for (DeadLetter letter : client.deadLetters().list(queue, DeadLetterFilter.all(), 1_000_000)) {
                letter.message().map(Message::id).ifPresent(dead::add);
            }
        }
        Map<UUID, String> states = new HashMap<>();
        for (PlannedWorkflow w : plannedWorkflows) {
            states.put(w.id(), client.workflow(w.id()).status().map(s -> s.state().name()).orElse("GONE"));
        }
        return new ChaosFlowCheck(ChaosFlowLedger.read(ledgerDir), plannedBatches, plannedWorkflows, resubmitted, dead, states, cause);
    }
}
