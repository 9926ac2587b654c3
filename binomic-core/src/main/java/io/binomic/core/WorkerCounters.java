package io.binomic.core;

/**
 * Counters of one worker since it started.
 *
 * @param inFlight tasks running now
 * @param succeeded executions that returned, counted when they return: those of {@code heldSucceeded} among them
 * @param failed executions that threw or timed out (each retried or dead-lettered)
 * @param retried messages scheduled for another attempt
 * @param deadLettered messages sent to the dead-letter queue
 * @param staleSettlements outcomes the broker refused because this worker no longer owned the delivery
 *        (it was reclaimed by another worker after this one stopped renewing its lease): no-ops, counted
 * @param held outcomes of every kind not yet written to the broker, now: held while it is unreachable (a
 *        worker that stops or dies holding them leaves their deliveries pending, and they run again)
 * @param heldSucceeded the successes among {@code held}
 */
public record WorkerCounters(long inFlight, long succeeded, long failed, long retried, long deadLettered,
                             long staleSettlements, long held, long heldSucceeded) {

    /** Counters with no outcome held. */
    public WorkerCounters(long inFlight, long succeeded, long failed, long retried, long deadLettered, long staleSettlements) {
        this(inFlight, succeeded, failed, retried, deadLettered, staleSettlements, 0, 0);
    }

    /** The successes whose outcome the broker has: {@code succeeded} less those still held. */
    public long writtenSucceeded() { return Math.max(0, succeeded - heldSucceeded); }
}
