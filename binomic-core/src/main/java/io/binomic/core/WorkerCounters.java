package io.binomic.core;

/**
 * Counters of one worker since it started.
 *
 * @param inFlight tasks running now
 * @param succeeded executions that returned
 * @param failed executions that threw or timed out (each retried or dead-lettered)
 * @param retried messages scheduled for another attempt
 * @param deadLettered messages sent to the dead-letter queue
 * @param staleSettlements outcomes the broker refused because this worker no longer owned the delivery
 *        (it was reclaimed by another worker after this one stopped renewing its lease): no-ops, counted
 */
public record WorkerCounters(long inFlight, long succeeded, long failed, long retried, long deadLettered,
                             long staleSettlements) {
}
