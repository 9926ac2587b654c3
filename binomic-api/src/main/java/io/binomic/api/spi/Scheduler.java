package io.binomic.api.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The durable store of deferred work of one {@link Broker}: DELAY submissions and retry backoffs
 * wait here until they are due, and periodic ticks are claimed here. A scheduler and its broker
 * share storage (a retry is stored by the broker's {@link Broker#settle}, atomically with the
 * ack, and moved by the scheduler), so a scheduler comes from the {@link SchedulerProvider} of its
 * broker's kind. {@code SchedulerContractTest} in binomic-core's test jar is the suite every
 * implementation must pass.
 *
 * <p>Guarantees an implementation must give: {@link #moveDue} moves each due entry exactly once
 * even when called concurrently, by any number of processes; {@link #fireTick} fires each tick
 * once across processes. {@link #schedule} and {@link #scheduleAll} of a tracked message
 * ({@link Message#TRACK}) also create its job record, in the same atomic step: state SCHEDULED,
 * with its due time (see the job records of {@link Broker}).
 */
public interface Scheduler extends AutoCloseable {

    /** Stores {@code message} durably until {@code dueAt}, when {@link #moveDue} puts it on its queue. */
    void schedule(Message message, Instant dueAt);

    /** {@link #schedule} for many messages due at the same time; schedulers override it to pipeline the writes. */
    default void scheduleAll(List<Message> messages, Instant dueAt) { messages.forEach(m -> schedule(m, dueAt)); }

    /**
     * Moves up to {@code max} scheduled messages that are due onto their queue, with a fresh
     * enqueue time; returns how many. {@code now} is the caller's clock: a broker without a clock
     * of its own (the in-memory one) compares due times with it; a broker with a clock of its own
     * (Redis: its {@code TIME}) uses that instead, so that a worker whose clock runs ahead cannot
     * move messages early.
     */
    int moveDue(String queue, Instant now, int max);

    /** When the earliest scheduled message of {@code queue} is due, if any. */
    Optional<Instant> nextDue(String queue);

    /**
     * Fires the periodic tick {@code tick} of {@code jobName}: claims the tick and enqueues
     * {@code message} (the tick's message) on {@code message.queue()} in one atomic step, so that a
     * claimed tick always has its message and a crash cannot lose it in between. The message's
     * enqueue time is set to the broker's clock.
     *
     * <p>{@link TickResult.Outcome#FIRED} for exactly one caller per tick, however many processes
     * ask; {@link TickResult.Outcome#ALREADY_FIRED} for the others and for ticks not after the last
     * fired one; {@link TickResult.Outcome#NOT_DUE}, writing nothing, for a tick still in the
     * future by the broker's clock, so that a client whose clock runs ahead can neither fire ticks
     * early nor block the ticks of the others; {@link TickResult.Outcome#SUPERSEDED}, writing
     * nothing, once the broker's clock has reached {@code supersededAt} (callers pass the next
     * tick, or later): a tick that reaches the broker late, after an outage or a pause, must not
     * fire beside the tick due by then. The claim is forgotten after {@code claimLifetime}
     * (callers pass several periods), so finished jobs leave nothing behind.
     */
    TickResult fireTick(String jobName, Instant tick, Instant supersededAt, Message message, Duration claimLifetime);

    /**
     * The last tick of the periodic task {@code jobName} fired on {@code queue} by any process,
     * while its claim is kept (the {@code claimLifetime} given to {@link #fireTick}); empty when
     * none is known. Empty by default.
     */
    default Optional<Instant> lastFiredTick(String queue, String jobName) { return Optional.empty(); }

    /**
     * Releases what this scheduler holds of its own. The storage belongs to the broker: closing the
     * scheduler leaves the scheduled messages where they are, and closing the broker ends the
     * scheduler too. Idempotent.
     */
    @Override
    void close();
}
