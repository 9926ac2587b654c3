package io.binomic.core.internal.memory;

import io.binomic.api.spi.FlowCounts;

/**
 * The memory broker's {@link FlowCounts} of one kind (batches or workflows), changed and read under
 * the broker's one lock, in the steps that create and end each batch or workflow.
 */
final class MemoryFlowCounts {

    /** Where a batch or workflow is counted. */
    enum State { OPEN, SUCCEEDED, FAILED, CANCELLED }

    private final long[] counts = new long[State.values().length];

    /** Moves one from {@code from} (null: newly counted) to {@code to}; nothing when they are the same. */
    void move(State from, State to) {
        if (from == to) {
            return;
        }
        if (from != null) {
            counts[from.ordinal()]--;
        }
        counts[to.ordinal()]++;
    }

    /**
     * The state an ended batch or workflow is counted in ({@link FlowCounts}): with {@code cancelWins} (a
     * workflow, as its status says) a cancelled one is cancelled even when every job succeeded.
     */
    static State ended(boolean allSucceeded, boolean cancelRequested, boolean cancelWins) {
        if (cancelRequested && (cancelWins || !allSucceeded)) {
            return State.CANCELLED;
        }
        return allSucceeded ? State.SUCCEEDED : State.FAILED;
    }

    FlowCounts read() {
        return new FlowCounts(counts[State.OPEN.ordinal()], counts[State.SUCCEEDED.ordinal()], counts[State.FAILED.ordinal()],
                counts[State.CANCELLED.ordinal()]);
    }
}
