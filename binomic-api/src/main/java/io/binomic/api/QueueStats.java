package io.binomic.api;

/**
 * A snapshot of one queue in the broker.
 *
 * @param queue the queue name
 * @param ready messages waiting to be fetched
 * @param pending messages fetched and not yet acknowledged (running, or stranded until reclaim)
 * @param delayed messages waiting for their due time (DELAY submissions and retry backoffs)
 * @param deadLetters messages in the dead-letter queue
 * @param consumers consumers registered on the queue
 */
public record QueueStats(String queue, long ready, long pending, long delayed, long deadLetters, int consumers) {
}
