package io.binomic.core.internal.process;

/**
 * What the master is doing about a slot's worker, as it publishes it for {@code binomic workers}.
 * The worker's own fields (state, counters) keep their last values when it dies; this is how a
 * reader tells a dead worker from a running one. The codes are part of the segment format: never
 * renumber them.
 */
public enum Supervision {
    /** The master watches a live worker (or none was started yet). */
    WATCHED(0),
    /** The worker is gone; the master starts the next one at the slot's next-start time. */
    RESTART_PENDING(1),
    /** The worker was alive but silent: the master is stopping it. */
    STOPPING_HUNG(2),
    /** The worker reported itself not consuming: the master is stopping it. */
    STOPPING_NOT_CONSUMING(3);

    private final int code;

    Supervision(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    static Supervision ofCode(int code) {
        for (Supervision supervision : values()) {
            if (supervision.code == code) {
                return supervision;
            }
        }
        throw new IllegalStateException("unknown supervision code " + code + " in the worker segment");
    }
}
