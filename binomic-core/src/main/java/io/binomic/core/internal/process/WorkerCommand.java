package io.binomic.core.internal.process;

/** What the master asks of a worker through its slot. Its ordinal is its code in the segment: never reorder, only append. */
public enum WorkerCommand {
    /** Keep running. */
    NONE,
    /** Stop fetching, let running tasks finish within the shutdown grace, then exit 0. */
    DRAIN,
    /** Stop at once: running tasks are cancelled (not acknowledged, so they come back by reclaim); exit 0. */
    STOP;
}
