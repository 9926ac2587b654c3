package io.binomic.core;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.TaskRegistry;
import io.binomic.api.spi.Broker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongConsumer;

/**
 * The dead-letter queue of every queue: inspect (list, count, group by failure class and task),
 * replay (back to the original queue, attempt reset, {@code replayedFrom} header) and purge.
 * The same code serves every broker; brokers only store and move entries.
 */
public final class DeadLetters {
    private static final int PAGE = 500;

    private final Broker broker;
    private final TaskRegistry registry;
    private final List<String> extraQueues;

    DeadLetters(Broker broker, TaskRegistry registry, List<String> extraQueues) {
        this.broker = broker;
        this.registry = registry;
        this.extraQueues = List.copyOf(extraQueues);
    }

    /** The queues this instance knows: its tasks' and its workers'. */
    public List<String> queues() {
        List<String> queues = new ArrayList<>(registry.queues());
        extraQueues.stream().filter(q -> !queues.contains(q)).forEach(queues::add);
        return queues;
    }

    /** Up to {@code limit} dead letters of {@code queue} matching {@code filter}, oldest first. */
    public List<DeadLetter> list(String queue, DeadLetterFilter filter, int limit) {
        List<DeadLetter> out = new ArrayList<>();
        scan(queue, filter, letter -> {
            out.add(letter);
            return out.size() < limit;
        });
        return out;
    }

    /** How many dead letters of {@code queue} match {@code filter}. */
    public long count(String queue, DeadLetterFilter filter) {
        long[] n = {0};
        scan(queue, filter, letter -> {
            n[0]++;
            return true;
        });
        return n[0];
    }

    /** Dead letters of {@code queue} counted by task, reason and failure class, largest group first. */
    public List<DeadLetterGroup> groups(String queue) {
        record GroupKey(String task, DeadLetterReason reason, String errorClass) { }
        Map<GroupKey, long[]> counts = new LinkedHashMap<>();
        scan(queue, DeadLetterFilter.all(), letter -> {
            counts.computeIfAbsent(new GroupKey(letter.task(), letter.failure().reason(), letter.failure().errorClass()),
                    k -> new long[1])[0]++;
            return true;
        });
        return counts.entrySet().stream()
                .map(e -> new DeadLetterGroup(queue, e.getKey().task(), e.getKey().reason(), e.getKey().errorClass(), e.getValue()[0]))
                .sorted(Comparator.comparingLong(DeadLetterGroup::count).reversed()
                        .thenComparing(DeadLetterGroup::task).thenComparing(DeadLetterGroup::errorClass))
                .toList();
    }

    /**
     * What a replay did: how many dead letters went back to their queue, and how many of those
     * selected were skipped and why.
     *
     * @param replayed put back on the queue
     * @param undecodable skipped because their message could not be decoded (a broken entry keeps
     *                    only its raw fields): they can only be inspected and purged
     * @param gone skipped because they were replayed or purged by someone else meanwhile
     */
    public record ReplayOutcome(long replayed, long undecodable, long gone) {
        /** Selected dead letters that were not replayed. */
        public long skipped() {
            return undecodable + gone;
        }
    }

    /** Replays every dead letter of {@code queue} matching {@code filter}; returns how many (see {@link #replayMatching}). */
    public long replay(String queue, DeadLetterFilter filter) {
        return replayMatching(queue, filter, done -> { }).replayed();
    }

    /** {@link #replay(String, DeadLetterFilter)}, reporting the running total after each batch. */
    public long replay(String queue, DeadLetterFilter filter, LongConsumer progress) {
        return replayMatching(queue, filter, progress).replayed();
    }

    /**
     * Replays every dead letter of {@code queue} matching {@code filter}, reporting the running
     * total after each batch, and says what was skipped: dead letters without a decodable message
     * cannot be replayed.
     */
    public ReplayOutcome replayMatching(String queue, DeadLetterFilter filter, LongConsumer progress) {
        List<String> ids = new ArrayList<>();
        long[] undecodable = {0};
        scan(queue, filter, letter -> {
            if (letter.message().isPresent()) {
                ids.add(letter.id());
            } else {
                undecodable[0]++;
            }
            return true;
        });
        long replayed = inBatches(ids, batch -> broker.replayDeadLetters(queue, batch), progress);
        return new ReplayOutcome(replayed, undecodable[0], ids.size() - replayed);
    }

    /**
     * The dead letter {@code deadLetterId} of {@code queue}, if there is one.
     *
     * @throws IllegalArgumentException when {@code deadLetterId} is not an id the broker could have given
     */
    public Optional<DeadLetter> find(String queue, String deadLetterId) {
        return broker.readDeadLetter(queue, deadLetterId);
    }

    /**
     * Replays one dead letter by id; true when it existed and could be replayed (use
     * {@link #find} first to tell a missing one from one without a decodable message).
     *
     * @throws IllegalArgumentException when {@code deadLetterId} is not an id the broker could have given
     */
    public boolean replayOne(String queue, String deadLetterId) {
        return broker.replayDeadLetters(queue, List.of(deadLetterId)) == 1;
    }

    /** Deletes one dead letter by id; true when it existed. */
    public boolean purgeOne(String queue, String deadLetterId) {
        return broker.deleteDeadLetters(queue, List.of(deadLetterId)) == 1;
    }

    /** Deletes every dead letter of {@code queue} matching {@code filter}; returns how many. */
    public long purge(String queue, DeadLetterFilter filter) {
        return purge(queue, filter, done -> { });
    }

    /** {@link #purge(String, DeadLetterFilter)}, reporting the running total after each batch. */
    public long purge(String queue, DeadLetterFilter filter, LongConsumer progress) {
        // Collect ids first: changing entries while scanning would move the cursor over them.
        List<String> ids = new ArrayList<>();
        scan(queue, filter, letter -> {
            ids.add(letter.id());
            return true;
        });
        return inBatches(ids, batch -> broker.deleteDeadLetters(queue, batch), progress);
    }

    private static long inBatches(List<String> ids, java.util.function.ToIntFunction<List<String>> action, LongConsumer progress) {
        long done = 0;
        for (int from = 0; from < ids.size(); from += PAGE) {
            done += action.applyAsInt(ids.subList(from, Math.min(ids.size(), from + PAGE)));
            progress.accept(done);
        }
        return done;
    }

    private interface Visitor {
        boolean visit(DeadLetter letter);
    }

    private void scan(String queue, DeadLetterFilter filter, Visitor visitor) {
        Optional<String> cursor = Optional.empty();
        while (true) {
            List<DeadLetter> page = broker.readDeadLetters(queue, cursor, PAGE);
            for (DeadLetter letter : page) {
                if (filter.matches(letter) && !visitor.visit(letter)) {
                    return;
                }
            }
            if (page.size() < PAGE) {
                return;
            }
            cursor = Optional.of(page.getLast().id());
        }
    }
}
