package io.binomic.core.internal.memory;

import io.binomic.api.DeadLetter;
import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The dead letters of the memory broker, under its lock: stored by a settlement atomically with
 * its ack, kept within the broker's retention (count and age), replayed or deleted by an operator.
 */
final class MemoryDeadLetters implements DeadLetterStore {

    private final MemoryState state;
    private final MemoryJobStore jobs;

    MemoryDeadLetters(MemoryState state, MemoryJobStore jobs) {
        this.state = state;
        this.jobs = jobs;
    }

    /** Keeps the failed delivery {@code d} as a dead letter of its queue. Called under the lock. */
    void add(Delivery d, DeadLetter.Failure failure) {
        QueueState q = state.queue(d.queue());
        String task = d.message().map(Message::task).orElse(d.rawFields().getOrDefault("task", "?"));
        String id = state.newReceipt();
        q.deadLetters.put(id, new DeadLetter(id, d.queue(), task, failure, d.message(), d.rawFields()));
        applyRetention(q);
    }

    private void applyRetention(QueueState q) {
        while (q.deadLetters.size() > state.config.deadLetterMaxCount()) {
            q.deadLetters.pollFirstEntry();
        }
        Instant oldest = state.clock.instant().minus(state.config.deadLetterMaxAge());
        q.deadLetters.values().removeIf(l -> l.failure().failedAt().isBefore(oldest));
    }

    @Override
    public List<DeadLetter> readDeadLetters(String name, Optional<String> cursor, int count) {
        return state.locked(() -> {
            QueueState q = state.queue(name);
            var view = cursor.isPresent() ? q.deadLetters.tailMap(cursor.get(), false) : q.deadLetters;
            return view.values().stream().limit(count).toList();
        });
    }

    @Override
    public Optional<DeadLetter> readDeadLetter(String name, String id) {
        requireReceipt(id);
        return state.locked(() -> {
            QueueState q = state.queues.get(name);
            return q == null ? Optional.empty() : Optional.ofNullable(q.deadLetters.get(id));
        });
    }

    @Override
    public int replayDeadLetters(String name, List<String> ids) {
        ids.forEach(MemoryDeadLetters::requireReceipt);
        return state.locked(() -> {
            QueueState q = state.queue(name);
            Instant now = state.clock.instant();
            int replayed = 0;
            for (String id : ids) {
                DeadLetter letter = q.deadLetters.get(id);
                if (letter == null || letter.message().isEmpty()) {
                    continue;
                }
                q.deadLetters.remove(id);
                Message back = letter.message().get().withAttempt(1, now).withReplayedFrom(id);
                state.addReady(name, back);
                jobs.createJob(back, JobState.QUEUED, null);
                replayed++;
            }
            return replayed;
        });
    }

    /** Ids of this broker are the digits {@link MemoryState#newReceipt()} writes. */
    private static void requireReceipt(String id) {
        if (!id.matches("\\d{1,19}")) {
            throw new IllegalArgumentException("'" + id + "' is not a dead-letter id of the memory broker (digits, as 'dlq list --details' shows them)");
        }
    }

    @Override
    public int deleteDeadLetters(String name, List<String> ids) {
        return state.locked(() -> {
            QueueState q = state.queue(name);
            int deleted = 0;
            for (String id : ids) {
                if (q.deadLetters.remove(id) != null) {
                    deleted++;
                }
            }
            return deleted;
        });
    }
}
