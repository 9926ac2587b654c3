package io.binomic.core;

import java.time.Duration;

/**
 * A running worker: fetches messages of its queues and runs their tasks on virtual threads.
 * Obtained from {@link Binomic#startWorker()}; {@link #close()} stops it gracefully.
 */
public interface Worker extends AutoCloseable {

    /** This worker's consumer name in the broker. */
    String consumerName();

    /** Live counters of this worker. */
    WorkerCounters counters();

    /** Whether this worker is consuming (fetching and settling), not merely alive. */
    WorkerHealth health();

    /**
     * Stops fetching, waits up to {@code grace} for running tasks, then cancels the rest. Cancelled
     * messages are not acknowledged: they return through reclaim. Returns when the worker has stopped.
     */
    void stop(Duration grace);

    /** True once the worker has stopped. */
    boolean isStopped();

    /** {@link #stop(Duration)} with the configured shutdown grace. */
    @Override
    void close();
}
