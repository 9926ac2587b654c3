package io.binomic.core.internal.process;

/** A worker's own view of its health, as published in its slot. Its ordinal is its code in the segment: never reorder, only append. */
public enum SlotHealth {
    /** The worker has not reported its health yet (it is starting). */
    UNKNOWN,
    /** The worker fetches and settles work as it should. */
    CONSUMING,
    /**
     * The worker is alive but stalled (a control loop stopped or is stuck); the slot's problem says
     * why. Only a restart helps: the master replaces it.
     */
    NOT_CONSUMING,
    /**
     * The worker cannot reach the broker, or the broker refuses its writes to the worker's ACL user (the problem
     * then has {@code (NOPERM)}); the slot's problem says since when. It holds the outcomes
     * it could not write and resumes by itself: the master leaves it alone (a restart would lose
     * those outcomes, and their tasks would run again).
     */
    BROKER_UNREACHABLE;
}
