package io.binomic.redis.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.client.codec.StringCodec;

/**
 * How a job's outcome on a Redis Cluster reaches its batch or workflow in the flows' slot, for
 * {@link ClusterBatches} and {@link ClusterWorkflows} alike. The fenced settle script keeps the outcome
 * in its queue's outbox hash in the settle's own step; the settling worker applies it to the flow and
 * removes the entry only then; and every worker's sweep repeats what a worker that died mid-way left:
 * a queue's outbox, and the flows due for longer than {@link #DUE_GRACE_MILLIS}.
 */
final class ClusterOutbox {
    private static final System.Logger LOG = System.getLogger(ClusterOutbox.class.getName());
    /** At most one sweep of a queue's outbox, and of the due index, this often per broker. */
    private static final long SWEEP_EVERY_NANOS = Duration.ofSeconds(2).toNanos();
    /** A flow due for less than this is left to the step that made it due, which is still at work. */
    private static final long DUE_GRACE_MILLIS = Duration.ofSeconds(5).toMillis();
    private static final int SWEEP_MAX = 100;

    /** An outbox entry: {@code <flow id> <job id>[ <outcome>]} to its outcome letter, in hash {@code outbox}. */
    record Entry(String outbox, String entry, String outcome) {
        UUID flow() { return UUID.fromString(entry.substring(0, entry.indexOf(' '))); }

        String job() {
            int from = entry.indexOf(' ') + 1;
            int end = entry.indexOf(' ', from);
            return end < 0 ? entry.substring(from) : entry.substring(from, end);
        }
    }

    /** What one kind of flow does with the outcomes of its jobs. */
    interface Flows {
        /** The outbox hash of {@code queue}. */
        String outboxOf(String queue);

        /** The sorted set of the flows that have something due, scored by since when. */
        String indexKey();

        /** Applies {@code entries} to their flows, delivers what that made due, and only then removes them ({@link #remove}). */
        void apply(List<Entry> entries);

        /** Delivers what flow {@code id}, read from the due index, has due. */
        void deliverDue(UUID id);
    }

    private final RedisContext redis;
    /** "batch" or "workflow", and its plural, for the calls' descriptions and the log. */
    private final String kind;
    private final String kinds;
    private final Flows flows;
    private final Map<String, Long> lastSweep = new ConcurrentHashMap<>();

    ClusterOutbox(RedisContext redis, String kind, String kinds, Flows flows) {
        this.redis = redis;
        this.kind = kind;
        this.kinds = kinds;
        this.flows = flows;
    }

    /** Removes applied {@code entries} from their outboxes; one that stays is applied again by a sweep, a no-op. */
    void remove(List<Entry> entries) {
        redis.pipelineWrite("remove " + entries.size() + " applied " + kind + " outbox entries", "they are applied again, a no-op",
                batch -> entries.forEach(e -> batch.<String, String>getMap(e.outbox(), StringCodec.INSTANCE).fastRemoveAsync(e.entry())));
    }

    /**
     * Repeats what a worker that died mid-way left undone: the outbox of {@code queue}, and the flows
     * due for longer than {@link #DUE_GRACE_MILLIS}. At most once per {@link #SWEEP_EVERY_NANOS} per
     * queue (and for the index) in this broker; a failure is logged, and the next sweep tries again.
     */
    void sweep(String queue) {
        try {
            if (due(queue)) {
                String outbox = flows.outboxOf(queue);
                Map<String, String> entries = redis.call("read the " + kind + " outbox of queue " + queue, () -> redis.client()
                        .<String, String>getMap(outbox, StringCodec.INSTANCE).readAllMap());
                List<Entry> left = new ArrayList<>();
                entries.forEach((entry, outcome) -> left.add(new Entry(outbox, entry, outcome)));
                for (int from = 0; from < left.size(); from += SWEEP_MAX) {
                    flows.apply(left.subList(from, Math.min(left.size(), from + SWEEP_MAX)));
                }
            }
            if (due("")) {
                long before = System.currentTimeMillis() - DUE_GRACE_MILLIS;
                var ids = redis.call("read the due " + kinds, () -> redis.client()
                        .<String>getScoredSortedSet(flows.indexKey(), StringCodec.INSTANCE).valueRange(0, true, before, true, 0, SWEEP_MAX));
                ids.forEach(id -> flows.deliverDue(UUID.fromString(id)));
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "the sweep of " + kind + " bookkeeping on queue ''{0}'' failed ({1}); the next sweep"
                    + " tries again", queue, e.getMessage());
        }
    }

    private boolean due(String what) {
        long now = System.nanoTime();
        Long last = lastSweep.get(what);
        if (last != null && now - last < SWEEP_EVERY_NANOS) {
            return false;
        }
        lastSweep.put(what, now);
        return true;
    }
}
