package io.binomic.api.spi;

import io.binomic.api.Uniqueness;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A {@link Broker} capability: unique jobs and debounce, each decided atomically with the store
 * of the message. Without it a submission with a uniqueness key or a debounce is refused.
 */
public interface UniqueSubmits {

    /**
     * Stores {@code message} (enqueued when {@code dueAt} is null, else scheduled for it, with its
     * job record when tracked) unless the key of its {@link UniqueClaim} is held; takes the key for
     * the claim's time-to-live in the same atomic step. Returns the id of the job that holds the key:
     * {@code message.id()} when it was stored, the earlier job's when it was a duplicate (nothing stored), null when
     * {@code message.id()} itself held the key (the same job stored before: nothing stored).
     */
    UUID submitUnique(Message message, Instant dueAt);

    /** {@link #submitUnique} for many messages, in order (a later one may be a duplicate of an earlier); brokers pipeline it. */
    default List<UUID> submitAllUnique(List<Message> messages, Instant dueAt) {
        return messages.stream().map(m -> submitUnique(m, dueAt)).toList();
    }

    /**
     * Schedules {@code message} for {@code dueAt} unless a job with the same debounce key
     * ({@link UniqueClaim#debounceKey}) of its queue and task is still waiting for its due time: that
     * job then takes {@code message}'s payload and headers and {@code dueAt}, and keeps its id and
     * record. A job that is already due (moved to its queue, running or ended) is not replaced: a
     * new one is scheduled. Returns the id of the job scheduled or replaced.
     */
    UUID submitDebounced(Message message, Instant dueAt);

    /**
     * Gives back the keys of {@link Uniqueness.Scope#WHILE_QUEUED} jobs a worker starts (one round
     * trip per call on Redis), each only if that job still holds it.
     */
    void releaseUniqueAtStart(List<Message> started);
}
