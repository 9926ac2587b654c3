package io.binomic.core.internal.client;

import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * The cancel of a batch's or a workflow's unfinished jobs, each as a job cancel does it, and the outcome the
 * whole cancel reports, worded as a job cancel's ({@link JobHandle.CancelOutcome}).
 *
 * @param requested a job of it was running: its worker interrupts it (or it ended while the cancel went on, by
 *                  running through)
 * @param cancelled a queued job of it was stopped
 */
record FlowJobCancels(boolean requested, boolean cancelled) {

    /** Cancels each of {@code unfinished} (job id to queue) in {@code store}, as of {@code now}. */
    static FlowJobCancels cancelEach(JobStore store, Map<UUID, String> unfinished, Instant now) {
        boolean requested = false;
        boolean cancelled = false;
        for (Map.Entry<UUID, String> e : unfinished.entrySet()) {
            switch (store.cancelJob(JobRecordFormat.cancelledBeforeStart(e.getValue(), e.getKey(), now))) {
                case CANCEL_REQUESTED -> requested = true;
                case CANCELLED -> cancelled = true;
                case ALREADY_ENDED -> requested |= ranThrough(store, e.getValue(), e.getKey());
                case NOT_FOUND -> { }
            }
        }
        return new FlowJobCancels(requested, cancelled);
    }

    /**
     * Whether a job the flow's cancel step listed unfinished, and whose own cancel found it ended, ended
     * by running: its handler ran at that step and ended between the two, so the cancel stopped nothing of
     * it, as for a job the cancel found running. One that ended CANCELLED was stopped at its start by the
     * step's mark.
     */
    private static boolean ranThrough(JobStore store, String queue, UUID id) {
        return store.readJob(queue, id).flatMap(JobRecord::state).filter(state -> state != JobState.CANCELLED).isPresent();
    }

    /**
     * What the cancel did: {@code changed} when it stopped something of the flow besides its jobs (a held job, an open
     * batch). A repeat ({@code askedBefore}) asks a job still running to stop again, but changes nothing: the first
     * cancel asked it.
     */
    JobHandle.CancelOutcome outcome(boolean changed, boolean askedBefore) {
        return requested && !askedBefore ? JobHandle.CancelOutcome.CANCEL_REQUESTED
                : changed || cancelled ? JobHandle.CancelOutcome.CANCELLED : JobHandle.CancelOutcome.ALREADY_ENDED;
    }
}
