package io.binomic.it;

import io.binomic.api.Backoff;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import java.time.Duration;
import java.util.List;

/**
 * The queues and tasks of the upgrade fixture: {@link UpgradeFixtureWriter} submits through them on
 * the code of a release, {@link UpgradeFromStoredEntriesIT} reads what it left with the code of
 * today. Their names and types must stay as they are: the stored entries name them.
 */
final class UpgradeFixture {
    private UpgradeFixture() { }

    /** An argument with fields of several JSON types. */
    record Order(String id, int quantity, List<String> tags) { }

    /** The argument of the second queue's task, of another type. */
    record Note(String text) { }

    /** Plain, prioritised, tracked, unique, delayed and debounced jobs that wait. */
    static final String A = "up-a";
    /** Plain jobs of another task and argument type; one paused task, its message parked. */
    static final String B = "up-b";
    /** What a worker left: a result, a retry waiting for its backoff, dead letters. */
    static final String DONE = "up-done";
    /** A queue with a stored rate limit (the queue's own, and one of a task). */
    static final String LIMITED = "up-limited";
    /** A queue paused as a whole, with a message waiting in it. */
    static final String PAUSED = "up-paused";
    /** An interval task's tick record and its tick's message. */
    static final String TICKS = "up-ticks";
    /** A queue of two partitions, one message on each. */
    static final String PARTS = "up-parts";

    static final List<String> QUEUES = List.of(A, B, DONE, LIMITED, PAUSED, TICKS, PARTS);

    static final Task<Order, Void> PLAIN = Task.builder("plain", Order.class, Void.class).queue(A).build();
    static final Task<Order, String> TRACKED = Task.builder("tracked", Order.class, String.class).queue(A).build();
    static final Task<Order, String> LATER = Task.builder("later", Order.class, String.class).queue(A).build();
    static final Task<Note, String> NOTE = Task.builder("note", Note.class, String.class).queue(B).build();
    static final Task<Note, String> HELD = Task.builder("held", Note.class, String.class).queue(B).build();
    static final Task<Order, String> SUCCEEDS = Task.builder("succeeds", Order.class, String.class).queue(DONE).build();
    static final Task<Order, String> FAILS = Task.builder("fails", Order.class, String.class).queue(DONE).maxAttempts(1).build();
    static final Task<Order, String> REFUSES = Task.builder("refuses", Order.class, String.class).queue(DONE).build();
    static final Task<Order, String> RETRIES = Task.builder("retries", Order.class, String.class).queue(DONE).maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofDays(3650))).build();
    static final Task<Order, String> THROTTLED = Task.builder("throttled", Order.class, String.class).queue(LIMITED)
            .rateLimit(RateLimit.perSecond(50)).build();
    static final Task<Order, String> IDLE = Task.builder("idle", Order.class, String.class).queue(PAUSED).build();
    /** Short, so that the writer sees its first tick soon; the claim is kept its minimum, 1 minute. */
    static final Task<Void, Void> TICK = Task.builder("every2s").queue(TICKS).interval(Duration.ofSeconds(2)).build();
    static final Task<Order, String> SPREAD = Task.builder("spread", Order.class, String.class).queue(PARTS).build();

    /** The queue's own limit stored on {@link #LIMITED}. */
    static final RateLimit QUEUE_RATE = RateLimit.perSecond(100);
    /** A task no worker of the writer knows: its job is dead-lettered as TASK_NOT_FOUND. */
    static final String UNKNOWN_TASK = "retired";
    /** The task {@link #UNKNOWN_TASK} as a later version defines it, to replay its dead letter. */
    static final Task<Order, String> RETIRED = Task.builder(UNKNOWN_TASK, Order.class, String.class).queue(DONE).build();
    /** The unique key the unique job holds. */
    static final String UNIQUE_KEY = "order-5";
    /** The debounce key the debounced job waits under. */
    static final String DEBOUNCE_KEY = "order-11";
}
