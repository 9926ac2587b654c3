package io.binomic.core.internal.worker;

import io.binomic.api.spi.Settlement;

/**
 * What the delivery state machine decided for one delivery: a settlement for the broker (ack,
 * retry later, dead-letter), or nothing, leaving the delivery pending so that reclaim brings it
 * back (the worker is stopping and cancelled the task).
 */
public sealed interface Outcome {

    /** Record this with the broker. */
    record Settle(Settlement settlement) implements Outcome { }

    /** Record nothing: the delivery stays pending and returns by reclaim. */
    record LeavePending(String reason) implements Outcome { }
}
