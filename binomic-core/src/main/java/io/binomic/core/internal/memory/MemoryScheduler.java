package io.binomic.core.internal.memory;

import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.TickResult;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The in-JVM scheduler: a view of the delayed set and tick claims of one {@link MemoryBroker},
 * under the broker's lock, so that what the broker's settle schedules and what this scheduler
 * moves are one store. Like its broker, it keeps nothing after the JVM ends.
 */
public final class MemoryScheduler implements Scheduler {
    private final MemoryBroker broker;

    public MemoryScheduler(MemoryBroker broker) {
        this.broker = Objects.requireNonNull(broker, "broker");
    }

    @Override
    public void schedule(Message message, Instant dueAt) {
        broker.schedule(message, dueAt);
    }

    @Override
    public void scheduleAll(List<Message> messages, Instant dueAt) {
        messages.forEach(m -> broker.schedule(m, dueAt));
    }

    /** Judged by {@code now}, the caller's clock: the memory broker has no clock shared between processes. */
    @Override
    public int moveDue(String queue, Instant now, int max) {
        return broker.moveDue(queue, now, max);
    }

    @Override
    public Optional<Instant> nextDue(String queue) {
        return broker.nextDue(queue);
    }

    @Override
    public TickResult fireTick(String jobName, Instant tick, Message message, Duration claimLifetime) {
        return broker.fireTick(jobName, tick, message, claimLifetime);
    }

    @Override
    public Optional<Instant> lastFiredTick(String queue, String jobName) {
        return broker.lastFiredTick(queue, jobName);
    }

    /** Nothing of its own to release: the messages it holds are the broker's, dropped when the broker closes. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "MemoryScheduler[" + broker + "]";
    }
}
