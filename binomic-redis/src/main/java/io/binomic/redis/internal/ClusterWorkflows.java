package io.binomic.redis.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The bookkeeping of workflows on a Redis Cluster, where a workflow's jobs, their records and queues
 * are in other hash slots than the workflow, and no script may span slots. The pattern of
 * {@link ClusterBatches}, with the single node's workflow logic ({@code lib.lua}) unchanged but for
 * where it writes what it does to other slots:
 * <ul>
 *   <li>Every workflow lives under the hash tag {@code {<prefix>:flows}} (with the broker-wide counts
 *       and this due index), so creating, releasing, ending and counting it is one step each. What such
 *       a step does to a job's record or queue (enqueue it, hold it again, cancel it, mark it
 *       cancel-requested, persist or expire it) it records as that node's <em>effect</em> in the
 *       workflow's due hash ({@code wf_effect}: one entry per node, later effects merged in, each
 *       stamped with a version), and indexes the workflow as due.
 *   <li>An effect is delivered in its queue's slot by {@code wf_deliver.lua}: an enqueue sets a
 *       once-key with it, so enqueueing again does nothing; a record keeps the version it was brought
 *       to, so an older effect delivered late changes nothing. Only then is it taken off the due hash
 *       ({@code undue.lua}, unless a newer effect was merged in meanwhile).
 *   <li>The settle script, in the job's queue slot, keeps the job's final outcome in that queue's
 *       workflow outbox in the same fenced step as the settlement. The settling worker then applies it
 *       to the workflow ({@code wf_apply.lua}: an outcome moves a node once, whatever resends and
 *       repeats), delivers what it made due, and only then removes the outbox entry. A delivery that
 *       finds a held job cancelled by its own id keeps that (X) in the outbox too, applied the same way.
 *   <li>A worker that died between those steps leaves an outbox entry or a due workflow behind: every
 *       worker's reclaim pass sweeps its queues' outboxes and the due index ({@link #sweep}), which
 *       repeats the steps, each a no-op where it was done.
 * </ul>
 */
final class ClusterWorkflows {
    private static final System.Logger LOG = System.getLogger(ClusterWorkflows.class.getName());
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    /** Rounds of delivering and applying what deliveries kept (X) in one call: each round ends nodes, so few are needed. */
    private static final int MAX_ROUNDS = 100;

    private final RedisContext redis;
    private final ClusterOutbox outbox;

    ClusterWorkflows(RedisContext redis) {
        this.redis = redis;
        this.outbox = new ClusterOutbox(redis, "workflow", "workflows", new ClusterOutbox.Flows() {
            @Override
            public String outboxOf(String queue) { return redis.keys(queue).workflowOutbox(); }

            @Override
            public String indexKey() { return ClusterWorkflows.this.indexKey(); }

            @Override
            public void apply(List<ClusterOutbox.Entry> entries) { ClusterWorkflows.this.apply(entries); }

            @Override
            public void deliverDue(UUID id) { ClusterWorkflows.this.deliverDue(id, true); }
        });
    }

    private String base() {
        String prefix = redis.config.keyPrefix();
        return prefix + ":{" + prefix + ":flows}:";
    }

    /** The workflow's hash: its slot is the flows' (the first braces), and it ends in {@code {<id>}} as on a single node. */
    String workflowKey(UUID id) { return base() + "workflow:{" + id + "}"; }

    /** The workflow's pending effects on its jobs' records and queues: 'e:<node>' to the effect (JSON, '' once delivered), 'n'. */
    String dueKey(UUID id) { return workflowKey(id) + ":due"; }

    /** The workflows with something due (sorted set, score = since when, epoch ms). */
    String indexKey() { return base() + "wf-due"; }

    String countsKey() { return base() + "counts"; }

    /**
     * Stores the workflow and each node's first effect in one step (once, failing with {@code effect}),
     * then delivers them. {@code nodeArgs} are the single node's per-node arguments; the key names of
     * each node (stream, record, delayed set) follow them here, as text.
     */
    void submit(String what, WriteOnce.Effect effect, UUID id, List<Object> head, List<List<Object>> nodeArgs, List<Message> jobs) {
        List<Object> args = new ArrayList<>(head);
        for (int i = 0; i < jobs.size(); i++) {
            RedisKeys k = redis.keys(jobs.get(i).queue());
            args.addAll(nodeArgs.get(i));
            args.addAll(List.of(k.stream(), k.job(jobs.get(i).id()), k.delayed()));
        }
        redis.writeOnce.sendScript(what, effect, LuaScripts.SUBMIT_WORKFLOW_CLUSTER, RScript.ReturnType.LONG,
                List.of(workflowKey(id), dueKey(id), indexKey(), countsKey()), args.toArray());
        deliverDueOrLeave(id, "submit");
    }

    /** Cancels workflow {@code id} in its slot ({@code cancel_workflow.lua}), then delivers what that made due. */
    List<?> cancel(UUID id) {
        List<?> reply = redis.call("cancel workflow " + id, () -> redis.client().getScript(StringCodec.INSTANCE).eval(
                RScript.Mode.READ_WRITE, LuaScripts.CANCEL_WORKFLOW, RScript.ReturnType.LIST, List.of(workflowKey(id))));
        deliverDueOrLeave(id, "cancel");
        return reply;
    }

    /**
     * {@link #deliverDue} after a step that stored the workflow: that step is done, and what it made due
     * is delivered by a sweep if this fails, so a failure is logged, not thrown.
     */
    private void deliverDueOrLeave(UUID id, String step) {
        try {
            deliverDue(id, false);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "workflow {0}: the {1} is stored, but delivering what it made due failed ({2});"
                    + " a worker''s sweep delivers it", id, step, e.getMessage());
        }
    }

    /** A pending effect of node field {@code field}, as the due hash holds it ({@code effect}) and wf_deliver.lua takes it. */
    private record Effect(String field, String effect, JsonNode op) {
        String queue() { return op.path("q").asText(); }

        UUID job() { return UUID.fromString(op.path("j").asText()); }
    }

    /**
     * Delivers what workflow {@code id} has due, each in its queue's slot, then takes it off; then applies
     * the X outcomes those deliveries kept, and delivers what they made due, until nothing is. A
     * failure leaves the rest due, for the sweep. {@code indexed} when the workflow was read from the
     * due index, which an empty due hash then leaves, so that the sweep never reads it again.
     */
    private void deliverDue(UUID id, boolean indexed) {
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Map<String, String> due = redis.call("read what workflow " + id + " has due", () -> redis.client()
                    .<String, String>getMap(dueKey(id), StringCodec.INSTANCE).readAllMap());
            List<Effect> effects = new ArrayList<>();
            List<Object> done = new ArrayList<>(List.of(id.toString()));
            due.forEach((field, json) -> {
                if (field.startsWith("e:") && !json.isEmpty()) {
                    effects.add(new Effect(field, json, parse(json)));
                    done.add(field);
                    done.add(json);
                }
            });
            if (effects.isEmpty() && !(indexed && round == 0)) {
                return;
            }
            List<Object> replies = new ArrayList<>();
            if (redis.replicaWait.on()) {
                // one queue at a time, so that each WAIT reply is its own master's (ClusterWrites)
                effects.forEach(e -> replies.add(redis.<Long>evalWrite("deliver " + e.field() + " of workflow " + id,
                        "it is delivered again if due, once", LuaScripts.WF_DELIVER, RScript.ReturnType.LONG, keys(e), args(id, e))));
            } else if (!effects.isEmpty()) {
                replies.addAll(redis.pipelineWrite("deliver " + effects.size() + " effect(s) of workflow " + id, "they are delivered"
                        + " again if due, once", batch -> effects.forEach(e -> batch.getScript(StringCodec.INSTANCE).evalAsync(
                        RScript.Mode.READ_WRITE, LuaScripts.WF_DELIVER, RScript.ReturnType.LONG, keys(e), args(id, e)))));
            }
            redis.<Long>evalWrite("take what workflow " + id + " delivered off its due list", "it is taken off again",
                    LuaScripts.UNDUE, RScript.ReturnType.LONG, List.of(dueKey(id), indexKey()), done.toArray());
            List<ClusterOutbox.Entry> cancelledById = new ArrayList<>();
            for (int i = 0; i < effects.size(); i++) {
                if (ScriptReplies.toLong(replies.get(i)) == 2) {
                    Effect e = effects.get(i);
                    cancelledById.add(new ClusterOutbox.Entry(redis.keys(e.queue()).workflowOutbox(), id + " " + e.job() + " X", "X"));
                }
            }
            if (cancelledById.isEmpty()) {
                return;
            }
            applyOnly(cancelledById);
            outbox.remove(cancelledById);
            indexed = false;
        }
    }

    private List<Object> keys(Effect e) {
        RedisKeys k = redis.keys(e.queue());
        return List.of(e.op().path("rk").asText(), e.op().path("sk").asText(), e.op().path("dl").asText(), k.batchOnce(e.job()),
                k.workflowOutbox());
    }

    private static Object[] args(UUID id, Effect e) {
        return new Object[] {id.toString(), e.effect(), Long.toString(ClusterBatches.ONCE_MILLIS)};
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a workflow's due effect is malformed JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** The settle script's 'O' marker: the job's final outcome kept in its queue's workflow outbox with the settlement. */
    static void addSettleArguments(Settlement s, Message m, RedisKeys k, List<Object> keys, List<Object> args) {
        String outcome = ClusterBatches.outcomeLetter(s);
        if (outcome == null) {
            return;
        }
        keys.add(k.workflowOutbox());
        args.add("O");
        args.add(Integer.toString(keys.size()));
        args.add(m.workflow() + " " + m.id() + " " + outcome);
        args.add(outcome);
    }

    /**
     * Applies the outcomes the settle script just kept in the outboxes (applied settlements of jobs of
     * workflows). A failure is logged and left to the sweep: the settlement itself is done.
     */
    void forward(List<Settlement> applied) {
        List<ClusterOutbox.Entry> entries = new ArrayList<>();
        for (Settlement s : applied) {
            Message m = s.delivery().message().orElse(null);
            String outcome = m == null || m.workflow() == null ? null : ClusterBatches.outcomeLetter(s);
            if (outcome != null) {
                String queue = RedisPriorities.queueOf(RedisPriorities.streamOf(s.delivery()));
                entries.add(new ClusterOutbox.Entry(redis.keys(queue).workflowOutbox(), m.workflow() + " " + m.id() + " " + outcome, outcome));
            }
        }
        try {
            apply(entries);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0} job(s) of workflows are settled, but applying them to their workflows failed ({1});"
                    + " a worker''s sweep of their queues applies them: {2}", entries.size(), e.getMessage(), entries);
        }
    }

    /**
     * Outbox entries applied to their workflows (all in one slot: one pipeline), what they made due
     * delivered, then the entries removed: each step done before the next starts, so an entry is
     * removed only once its effects are delivered.
     */
    private void apply(List<ClusterOutbox.Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        applyOnly(entries);
        outbox.remove(entries);
    }

    /** The entries applied to their workflows, and what those made due delivered. */
    private void applyOnly(List<ClusterOutbox.Entry> entries) {
        List<?> replies = redis.pipelineWrite("apply " + entries.size() + " job outcome(s) to their workflows", "they are applied again,"
                + " a no-op", batch -> entries.forEach(e -> batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE,
                LuaScripts.WF_APPLY, RScript.ReturnType.LONG, List.of(workflowKey(e.flow()), dueKey(e.flow())), e.job(),
                e.outcome())));
        Set<UUID> due = new LinkedHashSet<>();
        for (int i = 0; i < entries.size(); i++) {
            if (ScriptReplies.toLong(replies.get(i)) == 1) {
                due.add(entries.get(i).flow());
            }
        }
        due.forEach(id -> deliverDue(id, false));
    }

    /** {@link ClusterOutbox#sweep}: what a worker that died mid-way left of the workflows of {@code queue}. */
    void sweep(String queue) { outbox.sweep(queue); }
}
