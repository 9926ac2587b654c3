package io.binomic.core.internal.memory;

import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.TickResult;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import io.binomic.core.internal.memory.MemoryState.Scheduled;
import io.binomic.core.internal.memory.MemoryState.TickClaim;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The in-JVM scheduler: the delayed set and tick claims of one {@link MemoryBroker}, under the
 * broker's lock, so that what the broker's settle schedules and what this scheduler moves are one
 * store. Like its broker, it keeps nothing after the JVM ends.
 */
public final class MemoryScheduler implements Scheduler {
    private final MemoryBroker broker;
    private final MemoryState state;
    private final MemoryJobStore jobs;

    public MemoryScheduler(MemoryBroker broker) {
        this.broker = Objects.requireNonNull(broker, "broker");
        this.state = broker.state();
        this.jobs = broker.jobs();
    }

    @Override
    public void schedule(Message message, Instant dueAt) {
        state.locked(() -> {
            state.delay(message.queue(), message, dueAt.toEpochMilli());
            jobs.createJob(message, JobState.SCHEDULED, dueAt);
        });
        state.notifySubmission(List.of(message), dueAt);
    }

    @Override
    public void scheduleAll(List<Message> messages, Instant dueAt) { messages.forEach(m -> schedule(m, dueAt)); }

    /** Judged by {@code now}, the caller's clock: the memory broker has no clock shared between processes. */
    @Override
    public int moveDue(String queue, Instant now, int max) {
        return state.locked(() -> {
            QueueState q = state.queue(queue);
            int moved = 0;
            Iterator<Map.Entry<Scheduled, Message>> it = q.delayed.entrySet().iterator();
            while (moved < max && it.hasNext()) {
                Map.Entry<Scheduled, Message> e = it.next();
                if (e.getKey().dueMillis() > now.toEpochMilli()) {
                    break;
                }
                it.remove();
                Message m = e.getValue();
                state.addReady(queue, m.withAttempt(m.attempt(), now));
                moved++;
            }
            return moved;
        });
    }

    @Override
    public Optional<Instant> nextDue(String queue) {
        return state.locked(() -> {
            QueueState q = state.queue(queue);
            return q.delayed.isEmpty() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(q.delayed.firstKey().dueMillis()));
        });
    }

    /** The broker's clock, for tick claims, is the one it was built with (the system clock by default). */
    @Override
    public TickResult fireTick(String jobName, Instant tick, Instant supersededAt, Message message, Duration claimLifetime) {
        return state.locked(() -> {
            Instant now = state.clock.instant();
            if (tick.isAfter(now)) {
                return new TickResult(TickResult.Outcome.NOT_DUE, now);
            }
            Map<String, TickClaim> ticks = state.queue(message.queue()).lastTick;
            TickClaim last = ticks.get(jobName);
            if (last != null && last.expiresAt().isAfter(now) && last.tickMillis() >= tick.toEpochMilli()) {
                return new TickResult(TickResult.Outcome.ALREADY_FIRED, now);
            }
            if (!now.isBefore(supersededAt)) {
                return new TickResult(TickResult.Outcome.SUPERSEDED, now);
            }
            state.addReady(message.queue(), message.withAttempt(message.attempt(), now));
            jobs.createJob(message, JobState.QUEUED, null);
            ticks.put(jobName, new TickClaim(tick.toEpochMilli(), now.plus(claimLifetime)));
            return new TickResult(TickResult.Outcome.FIRED, now);
        });
    }

    /** The last tick of {@code jobName} fired on {@code queue}, while its claim lasts. */
    @Override
    public Optional<Instant> lastFiredTick(String queue, String jobName) {
        return state.locked(() -> {
            QueueState q = state.queues.get(queue);
            TickClaim claim = q == null ? null : q.lastTick.get(jobName);
            return claim == null || !claim.expiresAt().isAfter(state.clock.instant()) ? Optional.<Instant>empty()
                    : Optional.of(Instant.ofEpochMilli(claim.tickMillis()));
        });
    }

    /** Nothing of its own to release: the messages it holds are the broker's, dropped when the broker closes. */
    @Override
    public void close() {
    }

    @Override
    public String toString() { return "MemoryScheduler[" + broker + "]"; }
}
