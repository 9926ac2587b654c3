package io.binomic.core;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.TaskRegistry;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.PartitionRouter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import java.util.function.ToIntBiFunction;

/**
 * The dead-letter queue of every queue: inspect (list, count, group by failure class and task),
 * replay (back to the original queue, attempt reset, {@code replayedFrom} header) and purge.
 * The same code serves every broker; brokers only store and move entries.
 *
 * <p>A partitioned queue is named by its own (logical) name here too: its dead letters are those of
 * all its partitions, partition after partition. The id of a dead letter of partition {@code i > 0}
 * is the broker's id followed by {@code @i} (e.g. {@code 1733030000000-0@2}), and its
 * {@link DeadLetter#queue()} is the logical queue; a replay puts it back on its partition.
 */
public final class DeadLetters {
    private static final int PAGE = 500;

    private final Broker broker;
    private final TaskRegistry registry;
    private final List<String> extraQueues;
    private final PartitionRouter router;

    DeadLetters(Broker broker, TaskRegistry registry, List<String> extraQueues, PartitionRouter router) {
        this.broker = broker;
        this.registry = registry;
        this.extraQueues = List.copyOf(extraQueues);
        this.router = router;
    }

    private DeadLetterStore store() {
        return Capabilities.require(broker, DeadLetterStore.class, "its dead letters cannot be listed, replayed or deleted");
    }

    /** A broker's dead-letter id within one partition. */
    private record Located(String partition, String id) { }

    /** Where the dead letter {@code id} of {@code queue}, as this class gives ids, lives. */
    private static Located locate(String queue, String id) {
        int at = id.lastIndexOf(QueuePartitions.SEPARATOR);
        if (at > 0 && at < id.length() - 1 && id.substring(at + 1).chars().allMatch(Character::isDigit) && id.length() - at <= 3) {
            int index = Integer.parseInt(id.substring(at + 1));
            if (index > 0 && index < QueuePartitions.MAX) {
                return new Located(QueuePartitions.physical(queue, index), id.substring(0, at));
            }
        }
        return new Located(queue, id);
    }

    /** {@code letter} of partition {@code partition}, as users see it: the logical queue, an id naming the partition. */
    private static DeadLetter present(String queue, String partition, DeadLetter letter) {
        int index = QueuePartitions.index(partition);
        if (index == 0) {
            return letter;
        }
        return new DeadLetter(letter.id() + QueuePartitions.SEPARATOR + index, queue, letter.task(), letter.failure(), letter.message(),
                letter.rawFields());
    }

    /**
     * Runs {@code action} on the ids of {@code queue}, in batches of at most {@value #PAGE} ids of one partition, reporting
     * the running total after each batch; returns the sum.
     */
    private static long perPartition(String queue, List<String> ids, ToIntBiFunction<String, List<String>> action, LongConsumer progress) {
        Map<String, List<String>> byPartition = new LinkedHashMap<>();
        for (String id : ids) {
            Located l = locate(queue, id);
            byPartition.computeIfAbsent(l.partition(), p -> new ArrayList<>()).add(l.id());
        }
        long done = 0;
        for (Map.Entry<String, List<String>> e : byPartition.entrySet()) {
            List<String> inPartition = e.getValue();
            for (int from = 0; from < inPartition.size(); from += PAGE) {
                done += action.applyAsInt(e.getKey(), inPartition.subList(from, Math.min(inPartition.size(), from + PAGE)));
                progress.accept(done);
            }
        }
        return done;
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
        public long skipped() { return undecodable + gone; }
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
        long replayed = perPartition(queue, ids, (partition, batch) -> store().replayDeadLetters(partition, batch), progress);
        return new ReplayOutcome(replayed, undecodable[0], ids.size() - replayed);
    }

    /**
     * The dead letter {@code deadLetterId} of {@code queue}, if there is one.
     *
     * @throws IllegalArgumentException when {@code deadLetterId} is not an id the broker could have given
     */
    public Optional<DeadLetter> find(String queue, String deadLetterId) {
        Located l = locate(queue, deadLetterId);
        return store().readDeadLetter(l.partition(), l.id()).map(letter -> present(queue, l.partition(), letter));
    }

    /**
     * Replays one dead letter by id; true when it existed and could be replayed (use
     * {@link #find} first to tell a missing one from one without a decodable message).
     *
     * @throws IllegalArgumentException when {@code deadLetterId} is not an id the broker could have given
     */
    public boolean replayOne(String queue, String deadLetterId) {
        Located l = locate(queue, deadLetterId);
        return store().replayDeadLetters(l.partition(), List.of(l.id())) == 1;
    }

    /** Deletes one dead letter by id; true when it existed. */
    public boolean purgeOne(String queue, String deadLetterId) {
        Located l = locate(queue, deadLetterId);
        return store().deleteDeadLetters(l.partition(), List.of(l.id())) == 1;
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
        return perPartition(queue, ids, (partition, batch) -> store().deleteDeadLetters(partition, batch), progress);
    }

    private void scan(String queue, DeadLetterFilter filter, Predicate<DeadLetter> visitor) {
        router.forget(queue);
        for (String partition : router.of(queue).all(queue)) {
            if (!scanPartition(queue, partition, filter, visitor)) {
                return;
            }
        }
    }

    /** Scans one partition; false when the visitor asked to stop. */
    private boolean scanPartition(String queue, String partition, DeadLetterFilter filter, Predicate<DeadLetter> visitor) {
        Optional<String> cursor = Optional.empty();
        while (true) {
            List<DeadLetter> page = store().readDeadLetters(partition, cursor, PAGE);
            for (DeadLetter letter : page) {
                DeadLetter shown = present(queue, partition, letter);
                if (filter.matches(shown) && !visitor.test(shown)) {
                    return false;
                }
            }
            if (page.size() < PAGE) {
                return true;
            }
            cursor = Optional.of(page.getLast().id());
        }
    }
}
