package io.binomic.api.spi;

import java.util.UUID;

/**
 * A notification about a tracked job, published by the broker to the processes that
 * {@linkplain JobStore#subscribeJobEvents subscribed} to its queue. Best effort (a subscriber that
 * was disconnected misses it): subscribers read the job record after subscribing and after a
 * reconnect, so a missed event only delays them.
 *
 * @param queue the queue
 * @param id the job
 * @param kind what happened
 */
public record JobEvent(String queue, UUID id, Kind kind) {

    /** What happened. */
    public enum Kind {
        /** The job reached a final state: its record says which. */
        ENDED,
        /** A cancel was asked while the job ran: the worker that runs it interrupts it. */
        CANCEL_REQUESTED
    }
}
