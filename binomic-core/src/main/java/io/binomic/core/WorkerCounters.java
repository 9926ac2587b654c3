package io.binomic.core;

/**
 * Counters of one worker since it started.
 *
 * @param inFlight tasks running now
 * @param succeeded executions that returned
 * @param failed executions that threw or timed out (each retried or dead-lettered)
 * @param retried messages scheduled for another attempt
 * @param deadLettered messages sent to the dead-letter queue
 */
public record WorkerCounters(long inFlight, long succeeded, long failed, long retried, long deadLettered) {
}
