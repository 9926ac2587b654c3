package io.binomic.api.spi;

import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A {@link Broker} capability: workflows, graphs of jobs where a job is enqueued only once the jobs
 * it depends on succeeded. {@code WorkflowsContractTest} in binomic-core's test jar is the suite an
 * implementation must pass. Without it a workflow is refused, naming the broker.
 *
 * <p>What an implementation guarantees:
 * <ul>
 *   <li><b>Atomic submit.</b> {@link #submitWorkflow} stores the workflow's record, a job record for
 *       every node (QUEUED for a root, WAITING for the others), and enqueues the roots, in one atomic
 *       step: all or none. The other nodes' messages are held in the workflow's record.
 *   <li><b>Bookkeeping with the settlement.</b> {@link Broker#settle} of a job that carries
 *       {@link Message#workflow()} records the job's final outcome ({@link Batches#outcomeOf}; a retry
 *       records nothing) in its workflow in the same atomic, fenced step as the settlement: a
 *       settlement that is not applied (reclaimed, not pending, a resend) records nothing. An
 *       enqueued node takes the outcome; a dead-lettered one takes a later success (the run of its
 *       replay); any other is left as it is.
 *   <li><b>Release in that step.</b> The same step evaluates the nodes that depend on the one that
 *       changed, transitively: a held node whose dependencies all succeeded (or ended, for those
 *       whose failure it ignores, {@link NewWorkflow.Node#ignoringFailureOf}) is enqueued, its
 *       record set QUEUED; one with a dependency it does not ignore dead-lettered, cancelled or
 *       skipped is {@link NodeState#SKIPPED}, its record CANCELLED; a skipped one whose
 *       dependencies no longer failed (a replay succeeded) is held or enqueued again. Since a node
 *       leaves WAITING or SKIPPED for ENQUEUED only in such a step, it is enqueued exactly once,
 *       even when its last two dependencies settle at the same moment. A cancelled workflow
 *       releases nothing.
 *   <li><b>Delay.</b> A node with a {@link NewWorkflow.Node#delay()} is put, when released (at the
 *       submit, for a root), in its queue's delayed set ({@link Scheduler}) due that long after,
 *       its record SCHEDULED with that due time, instead of on its queue; it is ENQUEUED meanwhile.
 *   <li><b>Retention.</b> Once no node is held or enqueued, the record is kept for
 *       {@link NewWorkflow#retention()}, counted again from any later change (a resume). The
 *       records of its jobs live as long: none expires while a node is held or enqueued, and each is
 *       kept, once the workflow ended, for the workflow's retention or its own, whichever is longer.
 * </ul>
 */
public interface Workflows {

    /**
     * Stores {@code workflow} and enqueues its roots, atomically: all is stored or nothing (a
     * failure throws, and nothing was stored).
     */
    void submitWorkflow(NewWorkflow workflow);

    /**
     * Marks workflow {@code id} cancelled: each held or skipped node becomes CANCELLED (its record
     * too) and is never enqueued, and each enqueued node's record is marked cancel-requested (so it
     * does not start); returns the ids and queues of the enqueued nodes, for the caller to cancel
     * each as a job cancel does. Empty, and nothing changed, when there is no such workflow or no
     * node of it is held or enqueued.
     */
    Map<UUID, String> cancelWorkflow(UUID id);

    /** The status of workflow {@code id}, or empty when there is none (never was, or expired). */
    Optional<WorkflowStatus> readWorkflow(UUID id);

    /**
     * How many workflows are open (some node held or enqueued) and how many ended in each state,
     * over every client of this broker ({@link FlowCounts} says which state is which). Exact:
     * {@link #submitWorkflow} counts the workflow open in its atomic step, and the step that leaves
     * no node held or enqueued (a settlement, a cancel) moves it to its end state. A resume (a
     * dead-lettered node's replay that succeeded, releasing a skipped node) moves it back to open
     * from the state it had ended in; a replay that succeeds without releasing anything moves an
     * ended workflow to the state it ends in now (failed to succeeded, when it was the only
     * failure). A settlement that records nothing (a resend) counts nothing. One small read: no scan.
     */
    FlowCounts counts();
}
