package io.binomic.core;

import io.binomic.core.internal.FlowStats;

/**
 * The batches and workflows submitted and cancelled through one client ({@link Binomic#flowCounters()}),
 * counted in this process since the client was built, without a broker call. The broker-wide counts
 * by state are {@link Binomic#batchCounts()} and {@link Binomic#workflowCounts()}.
 *
 * @param batchesSubmitted batches submitted
 * @param batchesCancelled batches cancelled (by the API, the dashboard or the CLI) while open or while some job of theirs had
 *     not ended ({@code cancel()} returned {@code CANCELLED} or {@code CANCEL_REQUESTED}), each once: a repeat cancel
 *     returns {@code ALREADY_ENDED}
 * @param workflowsSubmitted workflows submitted
 * @param workflowsCancelled workflows cancelled while some job of theirs was held or enqueued, each once
 */
public record FlowCounters(long batchesSubmitted, long batchesCancelled, long workflowsSubmitted, long workflowsCancelled) {

    static FlowCounters of(FlowStats flows) {
        return new FlowCounters(flows.batchesSubmitted(), flows.batchesCancelled(), flows.workflowsSubmitted(), flows.workflowsCancelled());
    }
}
