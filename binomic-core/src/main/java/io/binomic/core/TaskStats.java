package io.binomic.core;

import java.time.Duration;

/**
 * Execution statistics of one task in one queue, as seen by the workers of this process.
 *
 * @param queue the queue
 * @param task the task name
 * @param succeeded executions that returned
 * @param failed executions that threw or timed out
 * @param cancelled executions cancelled by their submitters while they ran (neither succeeded nor failed)
 * @param retried messages scheduled for another attempt
 * @param deadLettered messages sent to the dead-letter queue
 * @param totalDuration summed duration of all executions
 * @param maxDuration longest execution
 */
public record TaskStats(String queue, String task, long succeeded, long failed, long cancelled, long retried, long deadLettered,
                        Duration totalDuration, Duration maxDuration) {

    /** Executions counted (succeeded + failed). */
    public long executions() { return succeeded + failed; }

    /** Mean execution time, zero when nothing ran. */
    public Duration meanDuration() { return executions() == 0 ? Duration.ZERO : totalDuration.dividedBy(executions()); }
}
