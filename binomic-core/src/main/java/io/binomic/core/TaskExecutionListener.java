package io.binomic.core;

import java.time.Duration;

/**
 * Told of every task execution that the workers of one {@link Binomic} finish, on the thread that
 * ran it: what a metrics library needs to record run times in its own histograms (the
 * {@code binomic-micrometer} module's timer). It runs on the worker's path, so it must be quick;
 * an exception it throws is logged and dropped, never counted against the task.
 *
 * <pre>{@code
 * binomic.addTaskExecutionListener((queue, task, outcome, duration) -> timer.record(duration));
 * }</pre>
 */
@FunctionalInterface
public interface TaskExecutionListener {

    /** How an execution ended. */
    enum Outcome {
        /** The handler returned. */
        SUCCEEDED,
        /** The handler threw or timed out: the message is retried or dead-lettered. */
        FAILED,
        /** Its submitter cancelled the job while it ran. */
        CANCELLED
    }

    /**
     * One execution ended.
     *
     * @param queue the task's queue (a partitioned queue's own name, not its partition's)
     * @param task the task name
     * @param outcome how it ended
     * @param duration how long the handler ran
     */
    void executed(String queue, String task, Outcome outcome, Duration duration);
}
