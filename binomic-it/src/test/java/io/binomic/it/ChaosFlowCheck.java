package io.binomic.it;

import io.binomic.it.ChaosFlowLedger.Run;
import io.binomic.it.ChaosReport.Fault;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;

/**
 * The verdict on the batches and workflows of a chaos run ({@link ChaosFlows}), from their ledger
 * alone plus the dead letters and the workflows' final states:
 *
 * <ul>
 *   <li>every job of a batch and every node of a workflow ran from one message (two message ids
 *       for one of them: it was enqueued twice), and completed or, for the job meant to, was
 *       dead-lettered: nothing lost;
 *   <li>each callback a batch's outcome calls for ran from exactly one message (two message ids:
 *       enqueued twice), none other ran, and it started after the jobs it waits for ended: for a
 *       job that ran more than once, its first successful end; for a dead-lettered one, the
 *       failure of its last attempt;
 *   <li>the summary a callback read ({@code TaskContext.batch()}) has the ledger's counts;
 *   <li>no run of a workflow node started before the first successful end of each node it
 *       depends on, and every workflow ended {@code SUCCEEDED};
 *   <li>a message that completed twice (a callback, a job, a node that ran twice) is a duplicate
 *       only a fault explains, by the job ledger's rules ({@link ChaosReport#cause}).
 * </ul>
 */
final class ChaosFlowCheck {
    /** A batch as submitted: its jobs' names, and whether one of them is meant to be dead-lettered (with an onDeath callback). */
    record PlannedBatch(UUID id, String flow, List<String> jobs, boolean death) { }

    /** A workflow as submitted: each node's name and the names it depends on. */
    record PlannedWorkflow(UUID id, String flow, Map<String, List<String>> nodes) { }

    private static final List<String> CALLBACKS = List.of("SUCCESS", "COMPLETE", "DEATH");

    private final Map<String, List<Run>> byNode = new HashMap<>();
    private final Set<UUID> dead;
    private final Function<List<ChaosLedger.Run>, Fault> cause;
    private final Map<UUID, List<Run>> byMessage = new HashMap<>();
    final List<String> failures = new ArrayList<>();
    final Map<String, Integer> duplicatesByCause = new TreeMap<>();
    final Map<String, Integer> callbacks = new TreeMap<>();
    int batches;
    int batchJobs;
    int deadLettered;
    int workflows;
    int nodes;
    int workflowsSucceeded;
    int orderingChecks;

    /**
     * @param resubmitted the workflows (by the driver's name) whose submit failed at least once and
     *        may therefore have been stored twice, under another id: such a copy must run whole too
     * @param dead message ids found in the dead-letter queues
     * @param workflowStates each planned workflow's final state by id
     * @param cause the fault that explains a message completed more than once, or null
     */
    ChaosFlowCheck(List<Run> runs, List<PlannedBatch> plannedBatches, List<PlannedWorkflow> plannedWorkflows, Set<String> resubmitted,
                   Set<UUID> dead, Map<UUID, String> workflowStates, Function<List<ChaosLedger.Run>, Fault> cause) {
        this.dead = dead;
        this.cause = cause;
        for (Run run : runs) {
            byNode.computeIfAbsent(run.group() + " " + run.node(), k -> new ArrayList<>()).add(run);
            byMessage.computeIfAbsent(run.id(), k -> new ArrayList<>()).add(run);
        }
        plannedBatches.forEach(this::checkBatch);
        List<PlannedWorkflow> all = new ArrayList<>(plannedWorkflows);
        all.addAll(copies(runs, plannedWorkflows, resubmitted));
        for (PlannedWorkflow w : all) {
            checkWorkflow(w);
        }
        for (PlannedWorkflow w : plannedWorkflows) {
            String state = workflowStates.get(w.id());
            if ("SUCCEEDED".equals(state)) {
                workflowsSucceeded++;
            } else {
                failures.add("workflow " + w.flow() + " " + w.id() + " ended " + state + ", not SUCCEEDED");
            }
        }
        Set<UUID> known = new java.util.HashSet<>();
        plannedBatches.forEach(b -> known.add(b.id()));
        all.forEach(w -> known.add(w.id()));
        for (Run run : runs) {
            if (!known.contains(run.group())) {
                failures.add("a " + run.kind() + " run of " + run.flow() + "/" + run.node() + " in group " + run.group()
                        + " that the run never submitted (message " + run.id() + ")");
                break;
            }
        }
        countDuplicates();
    }

    /** Workflows in the ledger under a planned workflow's name but another id: a failed submit that was stored after all. */
    private List<PlannedWorkflow> copies(List<Run> runs, List<PlannedWorkflow> planned, Set<String> resubmitted) {
        Map<UUID, PlannedWorkflow> copies = new java.util.LinkedHashMap<>();
        for (Run run : runs) {
            if (run.kind() != 'N' || run.group() == null || !resubmitted.contains(run.flow())) {
                continue;
            }
            planned.stream().filter(p -> p.flow().equals(run.flow()) && !p.id().equals(run.group())).findFirst()
                    .ifPresent(p -> copies.putIfAbsent(run.group(), new PlannedWorkflow(run.group(), p.flow(), p.nodes())));
        }
        return List.copyOf(copies.values());
    }

    private void checkBatch(PlannedBatch batch) {
        batches++;
        String name = "batch " + batch.flow() + " " + batch.id();
        int succeeded = 0;
        int deadHere = 0;
        long lastEnd = Long.MIN_VALUE;
        long firstDeath = Long.MAX_VALUE;
        for (String job : batch.jobs()) {
            batchJobs++;
            List<Run> runs = oneMessage(name + " job " + job, batch.id(), job);
            if (runs.isEmpty()) {
                continue;
            }
            long successfulEnd = firstSuccessfulEnd(runs);
            if (successfulEnd >= 0) {
                succeeded++;
                lastEnd = Math.max(lastEnd, successfulEnd);
            } else if (dead.contains(runs.getFirst().id())) {
                deadHere++;
                deadLettered++;
                long failed = lastAttemptFailure(runs);
                lastEnd = Math.max(lastEnd, failed);
                firstDeath = Math.min(firstDeath, failed);
            } else {
                failures.add(name + " job " + job + " lost: never completed, not dead-lettered");
            }
            if (job.equals("doomed") == (successfulEnd >= 0)) {
                failures.add(name + " job " + job + (successfulEnd >= 0 ? " succeeded, but always fails" : " did not succeed"));
            }
        }
        int total = batch.jobs().size();
        boolean allEnded = succeeded + deadHere == total;
        Set<String> expected = new LinkedHashSet<>();
        if (allEnded && succeeded == total) {
            expected.add("SUCCESS");
        }
        if (allEnded) {
            expected.add("COMPLETE");
        }
        if (deadHere > 0 && batch.death()) {
            expected.add("DEATH");
        }
        for (String kind : CALLBACKS) {
            String label = name + " callback " + kind;
            List<Run> runs = byNode.getOrDefault(batch.id() + " " + ChaosFlows.CALLBACK_PREFIX + kind, List.of());
            if (!expected.contains(kind)) {
                if (!runs.isEmpty()) {
                    failures.add(label + " ran, but the batch's outcome (" + succeeded + " of " + total + " succeeded, " + deadHere
                            + " dead-lettered) does not call for it");
                }
                continue;
            }
            runs = oneMessage(label, batch.id(), ChaosFlows.CALLBACK_PREFIX + kind);
            if (runs.isEmpty()) {
                continue;
            }
            callbacks.merge(kind, 1, Integer::sum);
            if (firstSuccessfulEnd(runs) < 0) {
                failures.add(label + " never completed");
            }
            long after = kind.equals("DEATH") ? firstDeath : lastEnd;
            for (Run run : runs) {
                orderingChecks++;
                if (run.start() < after) {
                    failures.add(label + " started " + (after - run.start()) + " ms before the end of the "
                            + (kind.equals("DEATH") ? "first dead-lettered job" : "batch's last job") + " (pid " + run.pid() + ")");
                }
                String summary = run.summary();
                String[] s = summary.split("/");
                boolean right = s.length == 4 && Integer.parseInt(s[0]) == total && Integer.parseInt(s[3]) == 0
                        && (kind.equals("DEATH")
                                ? Integer.parseInt(s[1]) <= succeeded && Integer.parseInt(s[2]) >= 1 && Integer.parseInt(s[2]) <= deadHere
                                : Integer.parseInt(s[1]) == succeeded && Integer.parseInt(s[2]) == deadHere);
                if (!right) {
                    failures.add(label + " saw the summary " + summary + " (total/succeeded/dead/cancelled); the ledger says "
                            + total + "/" + succeeded + "/" + deadHere + "/0");
                }
            }
        }
    }

    private void checkWorkflow(PlannedWorkflow workflow) {
        workflows++;
        String name = "workflow " + workflow.flow() + " " + workflow.id();
        Map<String, Long> ends = new HashMap<>();
        for (String node : workflow.nodes().keySet()) {
            nodes++;
            List<Run> runs = oneMessage(name + " node " + node, workflow.id(), node);
            long end = firstSuccessfulEnd(runs);
            if (!runs.isEmpty() && end < 0) {
                failures.add(name + " node " + node + " never completed: the workflow did not end");
            }
            ends.put(node, end);
        }
        workflow.nodes().forEach((node, deps) -> {
            for (Run run : byNode.getOrDefault(workflow.id() + " " + node, List.of())) {
                for (String dep : deps) {
                    orderingChecks++;
                    long depEnd = ends.get(dep);
                    if (depEnd < 0 || run.start() < depEnd) {
                        failures.add(name + " node " + node + " started " + (depEnd < 0 ? "though " + dep + " never succeeded"
                                : (depEnd - run.start()) + " ms before " + dep + " first succeeded") + " (pid " + run.pid() + ")");
                    }
                }
            }
        });
    }

    /** The runs of one job, which must all be of one message: none is a loss, two message ids a double enqueue. */
    private List<Run> oneMessage(String label, UUID group, String node) {
        List<Run> runs = byNode.getOrDefault(group + " " + node, List.of());
        if (runs.isEmpty()) {
            failures.add(label + " lost: never ran");
            return runs;
        }
        Set<UUID> ids = new LinkedHashSet<>();
        runs.forEach(r -> ids.add(r.id()));
        if (ids.size() > 1) {
            failures.add(label + " ENQUEUED " + ids.size() + " times: messages " + ids);
        }
        return runs;
    }

    private static long firstSuccessfulEnd(List<Run> runs) {
        return runs.stream().filter(Run::completed).mapToLong(Run::end).min().orElse(-1);
    }

    /**
     * When the attempt that spent the budget threw. Without that bound (the earliest start instead):
     * a run that never threw (killed, its delivery dead-lettered by the reclaim), and one a freeze
     * caught, whose delivery was dead-lettered by the reclaim while it slept and which threw after.
     */
    private long lastAttemptFailure(List<Run> runs) {
        Run last = runs.stream().max(Comparator.comparingInt(Run::attempt)).orElseThrow();
        Fault caught = cause.apply(List.of(last.asJobRun()));
        return last.failedAt() >= 0 && (caught == null || !caught.kind().equals("SIGSTOP")) ? last.failedAt()
                : runs.stream().mapToLong(Run::start).min().orElseThrow();
    }

    private void countDuplicates() {
        for (List<Run> runs : byMessage.values()) {
            if (runs.stream().filter(Run::completed).count() < 2) {
                continue;
            }
            Fault f = cause.apply(runs.stream().map(Run::asJobRun).toList());
            Run first = runs.stream().min(Comparator.comparingLong(Run::start)).orElseThrow();
            String what = f == null ? "UNEXPLAINED" : f.failover() ? f.kind() + " (writes not yet replicated)"
                    : f.onRedis() ? f.kind() + " longer than the lease margin" : f.kind();
            duplicatesByCause.merge((first.kind() == 'C' ? "callback " : first.kind() == 'N' ? "node " : "job ") + what, 1, Integer::sum);
            if (f == null) {
                failures.add("UNEXPLAINED duplicate: " + first.flow() + "/" + first.node() + " message " + first.id() + " completed "
                        + runs.stream().filter(Run::completed).count() + " times, first on pid " + first.pid());
            }
        }
    }

    /** The rows for the run's table. */
    List<String> lines() {
        return List.of(
                String.format("batches %d: jobs %d (dead-lettered %d, as planned), callbacks enqueued once and run %s; workflows %d"
                        + " (%d SUCCEEDED): nodes %d; ordering checks %d", batches, batchJobs, deadLettered, callbacks, workflows,
                        workflowsSucceeded, nodes, orderingChecks),
                "batch and workflow duplicates by cause: " + (duplicatesByCause.isEmpty() ? "none" : duplicatesByCause),
                "batch and workflow violations: " + (failures.isEmpty() ? "none" : failures.size() + ", the first " + failures.subList(0,
                        Math.min(5, failures.size()))));
    }
}
