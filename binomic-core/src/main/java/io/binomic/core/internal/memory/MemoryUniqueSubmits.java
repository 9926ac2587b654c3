package io.binomic.core.internal.memory;

import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import io.binomic.core.internal.memory.MemoryJobStore.StoredJob;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import io.binomic.core.internal.memory.MemoryState.Scheduled;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Unique and debounced submits of the memory broker, under its lock, with the semantics of the
 * Redis flow scripts: a held key returns the job holding it, and a job gives its key back when it
 * ends or is cancelled (a key held for a period is kept for the period).
 */
final class MemoryUniqueSubmits implements UniqueSubmits {

    /** A held unique key: the job holding it, until when. */
    private record UniqueHold(UUID job, Instant expiresAt) { }

    /** A debounced job waiting in the delayed set: where, and its id. */
    private record DebounceSlot(Scheduled slot, UUID job) { }

    private final MemoryState state;
    private final MemoryJobStore jobs;
    /** Held unique keys by "queue NUL task NUL key"; an expired one counts as free. */
    private final Map<String, UniqueHold> uniqueKeys = new HashMap<>();
    /** The unique key each holding job holds until it ends, to give it back on cancel. */
    private final Map<UUID, String> uniqueKeyOfJob = new HashMap<>();
    private final Map<String, DebounceSlot> debounced = new HashMap<>();
    /** Unique submits since the last sweep of expired keys. */
    private long uniqueSubmitsSinceSweep;

    MemoryUniqueSubmits(MemoryState state, MemoryJobStore jobs) {
        this.state = state;
        this.jobs = jobs;
    }

    private static String flowKey(Message m, String key) { return m.queue() + "\0" + m.task() + "\0" + key; }

    @Override
    public UUID submitUnique(Message message, Instant dueAt) { return submitAllUnique(List.of(message), dueAt).getFirst(); }

    @Override
    public List<UUID> submitAllUnique(List<Message> messages, Instant dueAt) {
        List<Message> stored = new ArrayList<>();
        List<UUID> ids = state.locked(() -> {
            List<UUID> out = new ArrayList<>(messages.size());
            Instant now = state.clock.instant();
            purgeExpiredUniqueKeys(now, messages.size());
            for (Message m : messages) {
                UniqueClaim claim = UniqueClaim.of(m).orElseThrow(
                        () -> new IllegalArgumentException("message " + m.id() + " has no unique claim (header '"
                                + UniqueClaim.HEADER + "')"));
                String k = flowKey(m, claim.key());
                UniqueHold hold = uniqueKeys.get(k);
                if (hold != null && hold.expiresAt().isAfter(now)) {
                    out.add(hold.job().equals(m.id()) ? null : hold.job());
                    continue;
                }
                uniqueKeys.put(k, new UniqueHold(m.id(), now.plus(claim.ttl())));
                if (claim.releasedAtEnd()) {
                    uniqueKeyOfJob.put(m.id(), k);
                }
                if (dueAt == null) {
                    state.addReady(m.queue(), m);
                    jobs.createJob(m, JobState.QUEUED, null);
                } else {
                    state.delay(m.queue(), m, dueAt.toEpochMilli());
                    jobs.createJob(m, JobState.SCHEDULED, dueAt);
                }
                stored.add(m);
                out.add(m.id());
            }
            return out;
        });
        if (!stored.isEmpty()) {
            state.notifySubmission(stored, dueAt);
        }
        return ids;
    }

    /**
     * Drops the expired keys (as Redis' key expiry does) every so many unique submits, so a long-lived
     * embedded broker holding keys for a period or of jobs that never ended does not grow without
     * bound; the sweep's cost is spread over at least as many submits as there are keys. Called under the lock.
     */
    private void purgeExpiredUniqueKeys(Instant now, int submits) {
        uniqueSubmitsSinceSweep += submits;
        if (uniqueSubmitsSinceSweep < Math.max(1024, uniqueKeys.size())) {
            return;
        }
        uniqueSubmitsSinceSweep = 0;
        var it = uniqueKeys.values().iterator();
        while (it.hasNext()) {
            UniqueHold hold = it.next();
            if (!hold.expiresAt().isAfter(now)) {
                it.remove();
                uniqueKeyOfJob.remove(hold.job());
            }
        }
    }

    /** How many unique keys this broker keeps now (held or expired and not yet swept). For tests. */
    int uniqueKeysKept() { return state.locked(uniqueKeys::size); }

    @Override
    public void releaseUniqueAtStart(List<Message> started) {
        state.locked(() -> started.forEach(m -> UniqueClaim.of(m)
                .ifPresent(c -> releaseUnique(flowKey(m, c.key()), m.id()))));
    }

    /** Gives the key back if {@code job} holds it. Called under the lock. */
    private void releaseUnique(String k, UUID job) {
        UniqueHold hold = uniqueKeys.get(k);
        if (hold != null && hold.job().equals(job)) {
            uniqueKeys.remove(k);
        }
        uniqueKeyOfJob.remove(job);
    }

    /** An ack or a dead letter ends the job: its key goes back (not for a period). Called under the lock. */
    void settled(Settlement settlement) {
        if (settlement instanceof Settlement.RetryLater) {
            return;
        }
        settlement.delivery().message().ifPresent(m -> UniqueClaim.of(m)
                .filter(UniqueClaim::releasedAtEnd)
                .ifPresent(c -> releaseUnique(flowKey(m, c.key()), m.id())));
    }

    /** A cancelled job gives its key back (a key held for a period is not recorded here). Called under the lock. */
    void cancelled(UUID job) {
        String k = uniqueKeyOfJob.get(job);
        if (k != null) {
            releaseUnique(k, job);
        }
    }

    @Override
    public UUID submitDebounced(Message message, Instant dueAt) {
        String key = UniqueClaim.debounceKey(message).orElseThrow(
                () -> new IllegalArgumentException("message " + message.id() + " has no debounce key (header '"
                        + UniqueClaim.DEBOUNCE_HEADER + "')"));
        UUID id = state.locked(() -> {
            String k = flowKey(message, key);
            QueueState q = state.queue(message.queue());
            DebounceSlot prev = debounced.get(k);
            Message waiting = prev == null ? null : q.delayed.get(prev.slot());
            if (waiting != null && waiting.id().equals(prev.job())) {
                q.delayed.remove(prev.slot());
                Scheduled slot = state.delay(message.queue(), message.withId(prev.job()), dueAt.toEpochMilli());
                debounced.put(k, new DebounceSlot(slot, prev.job()));
                StoredJob rec = jobs.job(message.queue(), prev.job());
                if (rec != null) {
                    rec.fields.put(JobRecords.DUE, Long.toString(dueAt.toEpochMilli()));
                }
                return prev.job();
            }
            Scheduled slot = state.delay(message.queue(), message, dueAt.toEpochMilli());
            jobs.createJob(message, JobState.SCHEDULED, dueAt);
            debounced.put(k, new DebounceSlot(slot, message.id()));
            return message.id();
        });
        if (id.equals(message.id())) {
            state.notifySubmission(List.of(message), dueAt);
        }
        return id;
    }
}
