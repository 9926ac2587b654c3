package io.binomic.core.internal.process;

/**
 * A worker's own view of its health, as published in its slot. The codes are part of the segment
 * format: never renumber them.
 */
public enum SlotHealth {
    /** The worker has not reported its health yet (it is starting). */
    UNKNOWN(0),
    /** The worker fetches and settles work as it should. */
    CONSUMING(1),
    /**
     * The worker is alive but stalled (a control loop stopped or is stuck); the slot's problem says
     * why. Only a restart helps: the master replaces it.
     */
    NOT_CONSUMING(2),
    /**
     * The worker cannot reach the broker; the slot's problem says since when. It holds the outcomes
     * it could not write and resumes by itself: the master leaves it alone (a restart would lose
     * those outcomes, and their tasks would run again).
     */
    BROKER_UNREACHABLE(3);

    private final int code;

    SlotHealth(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    static SlotHealth ofCode(int code) {
        for (SlotHealth health : values()) {
            if (health.code == code) {
                return health;
            }
        }
        throw new IllegalStateException("unknown worker health code " + code + " in the worker segment");
    }
}
