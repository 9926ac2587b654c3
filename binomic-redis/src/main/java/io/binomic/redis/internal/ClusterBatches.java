package io.binomic.redis.internal;

import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The bookkeeping of batches on a Redis Cluster, where a batch's jobs and callbacks are on queues in
 * other hash slots than the batch, and no script may span slots. Every step is a script of one slot,
 * and each step that crosses to another slot is idempotent and re-driven until done:
 * <ul>
 *   <li>Every batch lives under the hash tag {@code {<prefix>:flows}}, with the broker-wide counts and
 *       the <em>due index</em> (sorted set of the batches with something to enqueue), so that creating,
 *       counting and completing a batch, and recording what it must enqueue, are one step each.
 *   <li>A submit stores the batch and each job as <em>due</em> (its message in the batch's due hash) in
 *       one step; each due job or callback is then enqueued in its queue's slot by a script that sets a
 *       once-key with the enqueue ({@code batch_deliver.lua}), so enqueueing it again does nothing, and
 *       only then taken off the due hash.
 *   <li>The settle script, in the job's queue slot, keeps the job's final outcome in that queue's
 *       <em>outbox</em> in the same fenced step as the settlement. The settling worker then applies it
 *       to the batch ({@code batch_apply.lua}: counted once, by job id; a callback's claim records it
 *       due), enqueues what is due, and only then removes the outbox entry.
 *   <li>A worker that died between those steps leaves an outbox entry or a due batch behind: every
 *       worker's reclaim pass sweeps its queues' outboxes and the due index ({@link #sweep}), which
 *       repeats the steps, each a no-op where it was done.
 * </ul>
 */
final class ClusterBatches {
    private static final System.Logger LOG = System.getLogger(ClusterBatches.class.getName());
    /**
     * How long a once-key outlives its enqueue: a delivery repeated later than that (a due entry left by
     * a crash and not swept for a day) would enqueue again.
     */
    static final long ONCE_MILLIS = Duration.ofDays(1).toMillis();

    private final RedisContext redis;
    private final ClusterOutbox outbox;

    ClusterBatches(RedisContext redis) {
        this.redis = redis;
        this.outbox = new ClusterOutbox(redis, "batch", "batches", new ClusterOutbox.Flows() {
            @Override
            public String outboxOf(String queue) { return redis.keys(queue).batchOutbox(); }

            @Override
            public String indexKey() { return ClusterBatches.this.indexKey(); }

            @Override
            public void apply(List<ClusterOutbox.Entry> entries) { ClusterBatches.this.apply(entries); }

            @Override
            public void deliverDue(UUID id) { ClusterBatches.this.deliverDue(id, true); }
        });
    }

    private String base() {
        String prefix = redis.config.keyPrefix();
        return prefix + ":{" + prefix + ":flows}:";
    }

    String batchKey(UUID id) { return base() + "batch:" + id; }

    String jobsKey(UUID id) { return batchKey(id) + ":jobs"; }

    /** The batch's jobs and callbacks to enqueue: field ('j:<id>' or 'cb:KIND') to its delivery (JSON). */
    String dueKey(UUID id) { return batchKey(id) + ":due"; }

    /** The batches with something due (sorted set, score = since when, epoch ms). */
    String indexKey() { return base() + "due"; }

    String countsKey() { return base() + "counts"; }

    /** The batch's own fields that route its bookkeeping here (lib.lua: batch_fire, flow_count). */
    List<Object> batchFields(UUID id) {
        return List.of("id", id.toString(), "duekey", dueKey(id), "index", indexKey(), "counts", countsKey());
    }

    /** How {@code batch_deliver.lua} enqueues {@code m}: its queue's stream, the message, its record, once-key. */
    String delivery(Message m) {
        RedisKeys k = redis.keys(m.queue());
        Map<String, String> d = new LinkedHashMap<>();
        d.put("s", k.stream());
        d.put("m", StreamFields.toJson(StreamFields.encode(m)));
        d.put("o", k.batchOnce(m.id()));
        d.put("t", m.task());
        if (m.isTracked()) {
            d.put("r", k.job(m.id()));
            d.put("k", m.trackForMillis());
        }
        return StreamFields.toJson(d);
    }

    /**
     * Runs the cluster submit script ('new' or 'add') once ({@link WriteOnce}, failing with {@code effect}),
     * then enqueues the jobs it made due.
     */
    long submit(String what, WriteOnce.Effect effect, UUID id, List<Message> jobs, List<Object> args) {
        for (Message m : jobs) {
            args.addAll(List.of(m.id().toString(), m.queue(), delivery(m)));
        }
        Long reply = redis.writeOnce.sendScript(what, effect, LuaScripts.SUBMIT_BATCH_CLUSTER, RScript.ReturnType.LONG,
                List.of(batchKey(id), jobsKey(id), dueKey(id), indexKey()), args.toArray());
        if (reply != null && reply == 1) {
            deliverDueOrLeave(id, "submit");
        }
        return reply == null ? 0 : reply;
    }

    /**
     * {@link #deliverDue} after a step that stored the batch (a submit, a close, a cancel): that step is
     * done, and what it made due is enqueued by a sweep if this fails, so a failure is logged, not thrown.
     */
    void deliverDueOrLeave(UUID id, String step) {
        try {
            deliverDue(id);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "batch {0}: the {1} is stored, but enqueueing what it made due failed ({2});"
                    + " a worker''s sweep enqueues it", id, step, e.getMessage());
        }
    }

    /**
     * Enqueues what batch {@code id} has due, each once, then takes it off. A failure leaves the rest
     * due, for the sweep.
     */
    void deliverDue(UUID id) {
        deliverDue(id, false);
    }

    /**
     * {@link #deliverDue}; {@code indexed} when the batch was read from the due index, which an empty due
     * hash then leaves (the undue step takes it off), so that the sweep never reads it again.
     */
    private void deliverDue(UUID id, boolean indexed) {
        Map<String, String> due = redis.call("read what batch " + id + " has due", () -> redis.client()
                .<String, String>getMap(dueKey(id), StringCodec.INSTANCE).readAllMap());
        List<Object> done = new ArrayList<>(List.of(id.toString()));
        List<DueEntry> deliveries = new ArrayList<>();
        due.forEach((field, json) -> {
            if (!field.equals("n") && !json.isEmpty()) {
                deliveries.add(new DueEntry(field, StreamFields.fromJson(json)));
                done.add(field);
                done.add(json);
            }
        });
        if (due.isEmpty() && !indexed) {
            return;
        }
        if (redis.replicaWait.on()) {
            // one queue at a time, so that each WAIT reply is its own master's (ClusterWrites)
            deliveries.forEach(d -> redis.<Long>evalWrite("enqueue " + d.field() + " of batch " + id, "it is enqueued again if due, once",
                    LuaScripts.BATCH_DELIVER, RScript.ReturnType.LONG, d.keys(), d.args()));
        } else if (!deliveries.isEmpty()) {
            redis.pipelineWrite("enqueue " + deliveries.size() + " due job(s) or callback(s) of batch " + id, "they are enqueued again if due,"
                    + " once", batch -> deliveries.forEach(d -> batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE,
                    LuaScripts.BATCH_DELIVER, RScript.ReturnType.LONG, d.keys(), d.args())));
        }
        redis.<Long>evalWrite("take what batch " + id + " enqueued off its due list", "it is taken off again",
                LuaScripts.UNDUE, RScript.ReturnType.LONG, List.of(dueKey(id), indexKey()), done.toArray());
    }

    /** A due entry of a batch's due hash, as {@code batch_deliver.lua} takes it. */
    private record DueEntry(String field, Map<String, String> d) {
        List<Object> keys() {
            List<Object> keys = new ArrayList<>(List.of(d.get("s"), d.get("o")));
            if (d.containsKey("r")) {
                keys.add(d.get("r"));
            }
            return keys;
        }

        Object[] args() { return new Object[] {d.get("m"), d.get("t"), d.getOrDefault("k", "0"), Long.toString(ONCE_MILLIS)}; }
    }

    /** The settle script's 'O' marker: the job's final outcome kept in its queue's outbox with the settlement. */
    static void addSettleArguments(Settlement s, Message m, RedisKeys k, List<Object> keys, List<Object> args) {
        String outcome = outcomeLetter(s);
        if (outcome == null) {
            return;
        }
        keys.add(k.batchOutbox());
        args.add("O");
        args.add(Integer.toString(keys.size()));
        args.add(m.batch() + " " + m.id());
        args.add(outcome);
    }

    static String outcomeLetter(Settlement s) {
        Batches.Outcome outcome = Batches.outcomeOf(s);
        return outcome == null ? null : switch (outcome) {
            case SUCCEEDED -> "S";
            case DEAD_LETTERED -> "D";
            case CANCELLED -> "C";
        };
    }

    /**
     * Applies the outcomes the settle script just kept in the outboxes (applied settlements of jobs of
     * batches). A failure is logged and left to the sweep: the settlement itself is done.
     */
    void forward(List<Settlement> applied) {
        List<ClusterOutbox.Entry> entries = new ArrayList<>();
        for (Settlement s : applied) {
            Message m = s.delivery().message().orElse(null);
            String outcome = m == null || m.batch() == null ? null : outcomeLetter(s);
            if (outcome != null) {
                String queue = RedisPriorities.queueOf(RedisPriorities.streamOf(s.delivery()));
                entries.add(new ClusterOutbox.Entry(redis.keys(queue).batchOutbox(), m.batch() + " " + m.id(), outcome));
            }
        }
        try {
            apply(entries);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0} job(s) of batches are settled, but counting them in their batches failed ({1});"
                    + " a worker''s sweep of their queues counts them: {2}", entries.size(), e.getMessage(), entries);
        }
    }

    /**
     * Outbox entries applied to their batches (all batches are in one slot: one pipeline), what they made
     * due enqueued, then the entries removed (one pipeline): each step done before the next starts, so
     * an entry is removed only once its count is stored, and its callbacks enqueued.
     */
    private void apply(List<ClusterOutbox.Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        List<?> replies = redis.pipelineWrite("count " + entries.size() + " job(s) in their batches", "they are counted again, once",
                batch -> entries.forEach(e -> batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE,
                        LuaScripts.BATCH_APPLY, RScript.ReturnType.LONG, List.of(batchKey(e.flow()), jobsKey(e.flow()),
                                dueKey(e.flow())), e.job(), e.outcome())));
        Set<UUID> due = new LinkedHashSet<>();
        for (int i = 0; i < entries.size(); i++) {
            if (ScriptReplies.toLong(replies.get(i)) == 1) {
                due.add(entries.get(i).flow());
            }
        }
        due.forEach(this::deliverDue);
        outbox.remove(entries);
    }

    /** {@link ClusterOutbox#sweep}: what a worker that died mid-way left of the batches of {@code queue}. */
    void sweep(String queue) { outbox.sweep(queue); }

    /** After a cancel: marks the record of each job not ended cancel-requested, one script per job in its own slot. */
    void markCancelRequested(Map<UUID, String> unfinished) {
        unfinished.forEach((job, queue) -> redis.<Long>evalWrite("mark job " + job + " cancel-requested", "it is marked again",
                LuaScripts.MARK_CANCEL_REQUESTED, RScript.ReturnType.LONG, List.of(redis.keys(queue).job(job))));
    }
}
