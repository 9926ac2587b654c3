package io.binomic.core.internal.process;

/**
 * Life-cycle state of a worker process as published in its slot. The codes are part of the
 * segment format: never renumber them.
 */
public enum WorkerState {
    /** The slot has no worker yet (a fresh segment, or the master reset it before spawning). */
    EMPTY(0),
    /** The JVM runs and is building its Binomic instance and worker. */
    STARTING(1),
    /** The worker fetches and executes tasks. */
    RUNNING(2),
    /** The worker stopped fetching and waits for its running tasks before it exits. */
    DRAINING(3),
    /** The worker has stopped; the process is about to exit. */
    STOPPED(4);

    private final int code;

    WorkerState(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    static WorkerState ofCode(int code) {
        for (WorkerState state : values()) {
            if (state.code == code) {
                return state;
            }
        }
        throw new IllegalStateException("unknown worker state code " + code + " in the worker segment");
    }
}
