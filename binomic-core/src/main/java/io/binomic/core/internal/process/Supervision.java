package io.binomic.core.internal.process;

/**
 * What the master is doing about a slot's worker, as it publishes it for {@code binomic workers}.
 * The worker's own fields (state, counters) keep their last values when it dies; this is how a
 * reader tells a dead worker from a running one. Its ordinal is its code in the segment: never
 * reorder, only append.
 */
public enum Supervision {
    /** The master watches a live worker (or none was started yet). */
    WATCHED,
    /** The worker is gone; the master starts the next one at the slot's next-start time. */
    RESTART_PENDING,
    /** The worker was alive but silent: the master is stopping it. */
    STOPPING_HUNG,
    /** The worker reported itself not consuming: the master is stopping it. */
    STOPPING_NOT_CONSUMING;
}
