package io.binomic.core.internal.process;

/** Life-cycle state of a worker process as published in its slot. Its ordinal is its code in the segment: never reorder, only append. */
public enum WorkerState {
    /** The slot has no worker yet (a fresh segment, or the master reset it before spawning). */
    EMPTY,
    /** The JVM runs and is building its Binomic instance and worker. */
    STARTING,
    /** The worker fetches and executes tasks. */
    RUNNING,
    /** The worker stopped fetching and waits for its running tasks before it exits. */
    DRAINING,
    /** The worker has stopped; the process is about to exit. */
    STOPPED;
}
