package io.binomic.api;

/** How a task reaches the queue. */
public enum TaskMode {
    /** Enqueued when submitted. */
    DIRECT,
    /** Enqueued a fixed delay after it is submitted; the wait is durable in the broker. */
    DELAY,
    /** Fired by the scheduler at each tick of a cron expression (in a time zone, UTC by default). */
    CRON,
    /** Fired by the scheduler every fixed period. */
    INTERVAL
}
