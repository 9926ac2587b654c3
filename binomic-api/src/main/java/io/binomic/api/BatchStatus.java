package io.binomic.api;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * Where a batch stands, as {@code Binomic.batch(id)} and a callback's {@link TaskContext#batch()}
 * read it: how many of its jobs ended each way, which failed, and which callbacks were enqueued.
 * The counts are those of jobs that <em>ended</em>: a job waiting for a retry is still pending.
 *
 * @param id the batch id
 * @param open true while jobs may still be added (the batch completes only once closed)
 * @param cancelRequested true once the batch was cancelled
 * @param total the jobs in the batch
 * @param succeeded jobs that succeeded
 * @param deadLettered jobs dead-lettered (their retries spent, or refused)
 * @param cancelled jobs cancelled before or while they ran
 * @param failedJobs the ids of the jobs dead-lettered or cancelled, in no particular order
 * @param fired the callbacks enqueued so far (each is enqueued at most once)
 * @param createdAt when the batch was submitted
 */
public record BatchStatus(UUID id, boolean open, boolean cancelRequested, int total, int succeeded, int deadLettered, int cancelled,
                          List<UUID> failedJobs, Set<Callback> fired, Instant createdAt) {

    /** A batch's callbacks. */
    public enum Callback {
        /** Enqueued once every job succeeded (and the batch is closed). */
        SUCCESS,
        /** Enqueued once every job ended, whatever the outcome (and the batch is closed). */
        COMPLETE,
        /** Enqueued at the first job dead-lettered, once per batch. */
        DEATH
    }

    /** A batch's state, derived from its counts. */
    public enum State {
        /** Jobs may still be added. */
        OPEN,
        /** Closed, some jobs not ended yet. */
        RUNNING,
        /** Every job succeeded. */
        SUCCEEDED,
        /** Every job ended, and at least one was dead-lettered or cancelled, without a cancel of the batch. */
        FAILED,
        /**
         * The batch was cancelled, and every job ended, at least one of them not succeeded. A batch
         * cancelled after (or while) its last jobs all succeeded is {@link #SUCCEEDED}: its
         * {@code onSuccess} callback ran.
         */
        CANCELLED
    }

    public BatchStatus {
        Objects.requireNonNull(id, "id");
        failedJobs = List.copyOf(failedJobs);
        fired = Set.copyOf(fired);
        Objects.requireNonNull(createdAt, "createdAt");
    }

    /** Jobs not ended yet (queued, running, or waiting for a retry). */
    public int pending() { return total - succeeded - deadLettered - cancelled; }

    /** The state these counts make. */
    public State state() {
        if (open) {
            return State.OPEN;
        }
        if (pending() > 0) {
            return State.RUNNING;
        }
        if (succeeded == total) {
            return State.SUCCEEDED;
        }
        return cancelRequested ? State.CANCELLED : State.FAILED;
    }

    /**
     * The derived state and pending count first, then the counts, the cancel, the callbacks in their
     * declared order, the first failed job ids (a large batch may have thousands) and the creation
     * time: what a log line or an assertion message needs to tell where the batch stands.
     */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("BatchStatus[id=").append(id)
                .append(", state=").append(state())
                .append(", total=").append(total)
                .append(", succeeded=").append(succeeded)
                .append(", deadLettered=").append(deadLettered)
                .append(", cancelled=").append(cancelled)
                .append(", pending=").append(pending())
                .append(", cancelRequested=").append(cancelRequested)
                .append(", fired=").append(fired.stream().sorted().toList())
                .append(", failedJobs=[");
        int shown = Math.min(failedJobs.size(), SHOWN_FAILED_JOBS);
        for (int i = 0; i < shown; i++) {
            out.append(i == 0 ? "" : ", ").append(failedJobs.get(i));
        }
        if (failedJobs.size() > shown) {
            out.append(", ... (").append(failedJobs.size() - shown).append(" more)");
        }
        return out.append("], createdAt=").append(createdAt).append(']').toString();
    }

    private static final int SHOWN_FAILED_JOBS = 5;
}
