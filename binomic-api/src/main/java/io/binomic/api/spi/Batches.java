package io.binomic.api.spi;

import io.binomic.api.BatchStatus;
import io.binomic.api.JobState;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A {@link Broker} capability: batches of jobs with callbacks. {@code BatchesContractTest} in
 * binomic-core's test jar is the suite an implementation must pass. Without it a batch is refused,
 * naming the broker.
 *
 * <p>What an implementation guarantees:
 * <ul>
 *   <li><b>Atomic submit.</b> {@link #submitBatch} stores the batch's record, every job (with its job
 *       record: the jobs of a batch are tracked) and nothing else in one atomic step: all or none.
 *   <li><b>Bookkeeping with the settlement.</b> {@link Broker#settle} of a job that carries
 *       {@link Message#batch()} counts the job's final outcome in its batch in the same atomic, fenced
 *       step as the settlement: a settlement that is not applied (reclaimed, not pending, a resend)
 *       counts nothing. The outcome is {@link #outcomeOf}; a {@link Settlement.RetryLater} is not
 *       final and counts nothing. The count is keyed by the job's id: a job counted once is never
 *       counted again (a replay of a dead letter that then succeeds, another run after a reclaim).
 *       A job a batch does not list (or a batch that expired) counts nothing. A broker whose batch cannot
 *       share the settlement's step (the Redis broker on a Cluster, where they are in different hash
 *       slots) keeps the outcome with the settlement, in that step, and applies it to the batch in a
 *       later step keyed by the job's id, repeated until done (by another process, if the settling one
 *       dies); and a submit's step may store the jobs as due, each enqueued once after it.
 *   <li><b>Callbacks exactly once.</b> The step that makes the batch complete (closed, every job
 *       ended) enqueues {@link BatchStatus.Callback#COMPLETE}, and {@link BatchStatus.Callback#SUCCESS}
 *       when every job succeeded; the step that counts the batch's first dead letter enqueues
 *       {@link BatchStatus.Callback#DEATH}. Each is enqueued at most once per batch, guarded by a
 *       claim in the batch's record, atomically with the step; since the step is atomic with the
 *       settlement it also happens at least once, once the last job is settled.
 *   <li><b>Retention.</b> Once complete, the batch's record is kept for {@link NewBatch#retention()}.
 * </ul>
 */
public interface Batches {

    /** How a job of a batch ended, as a settlement says it. */
    enum Outcome { SUCCEEDED, DEAD_LETTERED, CANCELLED }

    /**
     * Creates {@code batch} and enqueues {@code jobs} (each carrying the batch's id, on any queues),
     * atomically: all are stored or none (a failure throws, and nothing was stored).
     */
    void submitBatch(NewBatch batch, List<Message> jobs);

    /**
     * Adds {@code jobs} to batch {@code id} and enqueues them, atomically, if the batch is open;
     * returns false (nothing stored) when it is closed or unknown.
     */
    boolean addToBatch(UUID id, List<Message> jobs);

    /**
     * Closes batch {@code id}: no job may be added from now, and if every job already ended the
     * batch completes in this step (its callbacks enqueued). Closing a closed batch changes nothing.
     * Returns false when there is no such batch.
     */
    boolean closeBatch(UUID id);

    /**
     * Marks batch {@code id} cancelled and closes it (so it completes once its jobs ended), and
     * returns the ids and queues of its jobs that have not ended, for the caller to cancel each;
     * empty when there is no such batch.
     */
    Map<UUID, String> cancelBatch(UUID id);

    /** The status of batch {@code id}, or empty when there is none (never was, or expired). */
    Optional<BatchStatus> readBatch(UUID id);

    /**
     * How many batches are open and how many ended in each state, over every client of this
     * broker ({@link FlowCounts} says which state is which). Exact: {@link #submitBatch} counts the
     * batch open in its atomic step, and the step that completes it (the settlement of its last job,
     * or the close or cancel of a batch whose jobs all ended) moves it to its end state; a batch
     * ends once (a later replay counts nothing), so a resent settlement or a second close or cancel
     * counts nothing. One small read: no scan of the batches.
     */
    FlowCounts counts();

    /**
     * The outcome a settlement of a job of a batch gives it, null when it is not final (a retry).
     * An ack whose job update ends the job CANCELLED, or an ack without an update of a tracked job
     * (the worker did not run it: its record said cancelled), is CANCELLED; another ack SUCCEEDED.
     */
    static Outcome outcomeOf(Settlement settlement) {
        return switch (settlement) {
            case Settlement.RetryLater r -> null;
            case Settlement.DeadLetter d -> Outcome.DEAD_LETTERED;
            case Settlement.Ack a when a.job() == null -> a.delivery().message().filter(Message::isTracked).isPresent()
                    ? Outcome.CANCELLED : Outcome.SUCCEEDED;
            case Settlement.Ack a -> JobState.CANCELLED.name().equals(a.job().set().get(JobRecords.STATE))
                    ? Outcome.CANCELLED : Outcome.SUCCEEDED;
        };
    }
}
