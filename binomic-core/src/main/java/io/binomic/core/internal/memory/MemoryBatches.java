package io.binomic.core.internal.memory;

import io.binomic.api.BatchStatus;
import io.binomic.api.BatchStatus.Callback;
import io.binomic.api.JobState;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.api.spi.Settlement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The memory broker's {@link Batches}: each batch's record under the broker's one lock, so the
 * bookkeeping of a job's settlement ({@link #settled}, called by {@link MemoryBroker#settle} for an
 * applied settlement) is atomic with it, as on Redis.
 */
final class MemoryBatches implements Batches {

    /** One batch: its jobs and how each ended (null while it has not). */
    private static final class Stored {
        final UUID id;
        final Instant createdAt;
        final long retentionMillis;
        final Map<Callback, Message> callbacks;
        final Map<UUID, String> queues = new LinkedHashMap<>();
        final Map<UUID, Outcome> ended = new HashMap<>();
        final EnumMap<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
        final EnumSet<Callback> fired = EnumSet.noneOf(Callback.class);
        boolean open;
        boolean cancelRequested;
        /** When its record goes, once complete; 0 before. */
        long expiresAtMillis;
        /** The state the broker-wide counts have it in. */
        MemoryFlowCounts.State counted;

        Stored(NewBatch b, Instant now) {
            id = b.id();
            createdAt = now;
            retentionMillis = b.retention().toMillis();
            callbacks = b.callbacks();
            open = b.open();
        }

        int count(Outcome o) { return counts.getOrDefault(o, 0); }
    }

    private final MemoryState state;
    private final MemoryJobStore jobs;
    private final Map<UUID, Stored> batches = new HashMap<>();
    private final MemoryFlowCounts counted = new MemoryFlowCounts();

    MemoryBatches(MemoryState state, MemoryJobStore jobs) {
        this.state = state;
        this.jobs = jobs;
    }

    @Override
    public void submitBatch(NewBatch batch, List<Message> messages) {
        state.locked(() -> {
            if (live(batch.id()) != null) {
                throw new IllegalStateException("batch " + batch.id() + " exists already");
            }
            carry(batch.id(), messages); // before it is stored: a refused submit leaves nothing behind
            Stored b = new Stored(batch, state.clock.instant());
            batches.put(b.id, b);
            add(b, messages);
            counted.move(null, MemoryFlowCounts.State.OPEN);
            b.counted = MemoryFlowCounts.State.OPEN;
        });
        state.notifySubmission(List.copyOf(messages), null);
    }

    @Override
    public boolean addToBatch(UUID id, List<Message> messages) {
        boolean added = state.locked(() -> {
            Stored b = live(id);
            if (b == null || !b.open) {
                return false;
            }
            add(b, messages);
            return true;
        });
        if (added) {
            state.notifySubmission(List.copyOf(messages), null);
        }
        return added;
    }

    private static void carry(UUID batch, List<Message> messages) {
        for (Message m : messages) {
            if (!batch.equals(m.batch())) {
                throw new IllegalArgumentException("message " + m.id() + " does not carry batch " + batch);
            }
        }
    }

    private void add(Stored b, List<Message> messages) {
        carry(b.id, messages);
        for (Message m : messages) {
            if (b.queues.putIfAbsent(m.id(), m.queue()) != null) {
                continue; // listed already: a resent add, whose job must not be enqueued or counted again
            }
            state.addReady(m.queue(), m);
            jobs.createJob(m, JobState.QUEUED, null);
        }
    }

    @Override
    public boolean closeBatch(UUID id) {
        List<Message> enqueued = new ArrayList<>();
        boolean found = state.locked(() -> {
            Stored b = live(id);
            if (b == null) {
                return false;
            }
            b.open = false;
            completeIfDone(b, enqueued);
            return true;
        });
        notify(enqueued);
        return found;
    }

    @Override
    public Map<UUID, String> cancelBatch(UUID id) {
        List<Message> enqueued = new ArrayList<>();
        Map<UUID, String> unfinished = state.locked(() -> {
            Stored b = live(id);
            if (b == null) {
                return Map.<UUID, String>of();
            }
            if (b.expiresAtMillis != 0) {
                return Map.<UUID, String>of(); // ended: nothing to cancel, and its record stays as it ended
            }
            b.cancelRequested = true;
            b.open = false;
            completeIfDone(b, enqueued);
            Map<UUID, String> left = new LinkedHashMap<>();
            b.queues.forEach((job, queue) -> {
                if (!b.ended.containsKey(job)) {
                    left.put(job, queue);
                    jobs.requestCancel(queue, job);
                }
            });
            return left;
        });
        notify(enqueued);
        return unfinished;
    }

    @Override
    public Optional<BatchStatus> readBatch(UUID id) {
        return state.locked(() -> Optional.ofNullable(live(id)).map(b -> new BatchStatus(b.id, b.open, b.cancelRequested,
                b.queues.size(), b.count(Outcome.SUCCEEDED), b.count(Outcome.DEAD_LETTERED), b.count(Outcome.CANCELLED),
                b.ended.entrySet().stream().filter(e -> e.getValue() != Outcome.SUCCEEDED).map(Map.Entry::getKey).toList(),
                b.fired, b.createdAt)));
    }

    @Override
    public FlowCounts counts() { return state.locked(counted::read); }

    /**
     * Counts an applied settlement of a job of a batch; called under the lock by the broker's settle,
     * in the step that applies it. Returns the callbacks it enqueued, for the caller to announce.
     */
    void settled(Settlement settlement, Message job, List<Message> enqueued) {
        Outcome outcome = Batches.outcomeOf(settlement);
        Stored b = outcome == null ? null : live(job.batch());
        if (b == null || !b.queues.containsKey(job.id()) || b.ended.putIfAbsent(job.id(), outcome) != null) {
            return; // a retry, a batch that expired or does not list the job, or a job counted already
        }
        b.counts.merge(outcome, 1, Integer::sum);
        if (outcome == Outcome.DEAD_LETTERED && b.count(Outcome.DEAD_LETTERED) == 1) {
            fire(b, Callback.DEATH, enqueued);
        }
        completeIfDone(b, enqueued);
    }

    private void completeIfDone(Stored b, List<Message> enqueued) {
        if (b.open || b.ended.size() < b.queues.size()) {
            return;
        }
        fire(b, Callback.COMPLETE, enqueued);
        if (b.count(Outcome.SUCCEEDED) == b.queues.size()) {
            fire(b, Callback.SUCCESS, enqueued);
        }
        if (b.expiresAtMillis == 0) {
            b.expiresAtMillis = state.clock.millis() + b.retentionMillis;
            MemoryFlowCounts.State ended = MemoryFlowCounts.ended(b.count(Outcome.SUCCEEDED) == b.queues.size(), b.cancelRequested,
                    false);
            counted.move(b.counted, ended);
            b.counted = ended;
        }
    }

    /** Enqueues the callback {@code kind} of {@code b} unless it was: the claim is the {@code fired} set. */
    private void fire(Stored b, Callback kind, List<Message> enqueued) {
        Message callback = b.callbacks.get(kind);
        if (callback == null || !b.fired.add(kind)) {
            return;
        }
        Message m = callback.withAttempt(1, state.clock.instant());
        state.addReady(m.queue(), m);
        jobs.createJob(m, JobState.QUEUED, null);
        enqueued.add(m);
    }

    /** The batch, unless its retention passed (then it is dropped). Called under the lock. */
    private Stored live(UUID id) {
        Stored b = batches.get(id);
        if (b != null && b.expiresAtMillis != 0 && state.clock.millis() >= b.expiresAtMillis) {
            batches.remove(id);
            return null;
        }
        return b;
    }

    void notify(List<Message> enqueued) {
        if (!enqueued.isEmpty()) {
            state.notifySubmission(List.copyOf(enqueued), null);
        }
    }
}
