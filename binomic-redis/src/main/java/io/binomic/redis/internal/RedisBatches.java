package io.binomic.redis.internal;

import io.binomic.api.BatchStatus;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.api.spi.Settlement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Batches. On one Redis node a batch is two hashes under its own hash tag
 * ({@code <prefix>:batch:{<id>}} and {@code ...:jobs}), created with its jobs by
 * {@code submit_batch.lua}, and counted by the settle script ({@code settle.lua}, {@code batch_settled}
 * in {@code lib.lua}) in the same step as each job's final settlement, which also enqueues the
 * callbacks: those scripts reach keys of several hash tags. On a Cluster ({@code cluster} not null)
 * the same hashes and counting functions serve, but each step stays in one slot and the steps that
 * cross slots are idempotent and re-driven ({@link ClusterBatches}).
 */
final class RedisBatches implements Batches {
    /** The most job ids an add's failure names. */
    private static final int IDS_SAID = 10;
    private final RedisContext redis;
    /** The Cluster's bookkeeping, null on a single node. */
    private final ClusterBatches cluster;

    RedisBatches(RedisContext redis, ClusterBatches cluster) {
        this.redis = redis;
        this.cluster = cluster;
    }

    private String batchKeyOf(UUID id) { return cluster == null ? batchKey(prefix(), id) : cluster.batchKey(id); }

    private String jobsKeyOf(UUID id) { return cluster == null ? jobsKey(prefix(), id) : cluster.jobsKey(id); }

    static String batchKey(String prefix, UUID id) { return prefix + ":batch:{" + id + "}"; }

    static String jobsKey(String prefix, UUID id) { return batchKey(prefix, id) + ":jobs"; }

    /**
     * The broker-wide counts of batches and workflows by state, one hash the scripts that create and
     * end them keep ({@code flow_count} in {@code lib.lua}, which derives this name from the flow's key).
     */
    static String flowCountsKey(String prefix) { return prefix + ":flows:counts"; }

    /** The counts of {@code kind} ('batch' or 'workflow') in {@link #flowCountsKey}: one HMGET. */
    static FlowCounts readCounts(RedisContext redis, String kind) {
        return readCounts(redis, flowCountsKey(redis.config.keyPrefix()), kind);
    }

    /** The counts of {@code kind} in hash {@code key}. */
    static FlowCounts readCounts(RedisContext redis, String key, String kind) {
        List<String> states = List.of("open", "succeeded", "failed", "cancelled");
        Map<String, String> v = redis.call("read the counts of " + kind + " flows", () -> redis.client()
                .<String, String>getMap(key, StringCodec.INSTANCE)
                .getAll(new LinkedHashSet<>(states.stream().map(s -> kind + ":" + s).toList())));
        long[] n = new long[states.size()];
        for (int i = 0; i < n.length; i++) {
            String count = v == null ? null : v.get(kind + ":" + states.get(i));
            n[i] = count == null ? 0 : Long.parseLong(count);
        }
        return new FlowCounts(n[0], n[1], n[2], n[3]);
    }

    private String prefix() { return redis.config.keyPrefix(); }

    @Override
    public void submitBatch(NewBatch batch, List<Message> jobs) {
        List<Object> args = new ArrayList<>(List.of("new", batch.open() ? "1" : "0", Long.toString(batch.retention().toMillis()),
                Long.toString(System.currentTimeMillis())));
        List<Object> callbackFields = new ArrayList<>();
        batch.callbacks().forEach((kind, m) -> {
            RedisKeys k = redis.keys(m.queue());
            redis.checkSize(m);
            String name = kind.name();
            callbackFields.addAll(List.of("cb:" + name, StreamFields.toJson(StreamFields.encode(m)), "cbstream:" + name, k.stream()));
            if (m.isTracked()) {
                callbackFields.addAll(List.of("cbjob:" + name, k.job(m.id()), "cbtask:" + name, m.task(), "cbret:" + name,
                        m.trackForMillis()));
            }
            if (cluster != null) {
                callbackFields.addAll(List.of("cbd:" + name, cluster.delivery(m)));
            }
        });
        if (cluster != null) {
            callbackFields.addAll(cluster.batchFields(batch.id()));
        }
        args.add(Integer.toString(callbackFields.size()));
        args.addAll(callbackFields);
        run("submit batch " + batch.id(), WriteOnce.Effect.create("batch id " + batch.id(), "a batch built and submitted again is a"
                + " second batch, with a new id, whose jobs run besides this one's; binomic.batch(" + batch.id() + ").status()"
                + " finds this one if it was created"), batch.id(), jobs, args);
    }

    @Override
    public boolean addToBatch(UUID id, List<Message> jobs) {
        List<Object> args = new ArrayList<>(List.of("add", "", "", "", "0"));
        return run("add " + jobs.size() + " job(s) to batch " + id, WriteOnce.Effect.add(jobIds(jobs), "a job added again is a"
                + " second job, with a new id, which runs besides this one; binomic.batch(" + id + ").status().total() counts the"
                + " jobs added"), id, jobs, args) == 1;
    }

    /** The ids of {@code jobs} for a failure: {@value #IDS_SAID} at most. */
    private static String jobIds(List<Message> jobs) {
        String ids = String.join(", ", jobs.stream().limit(IDS_SAID).map(m -> m.id().toString()).toList());
        return (jobs.size() == 1 ? "job id " : "job ids ") + ids + (jobs.size() > IDS_SAID ? ", ... (" + jobs.size() + " in all)" : "");
    }

    /**
     * Runs the submit script ('new' or 'add') once ({@link WriteOnce}): sent again, a 'new' would find
     * the batch it created and fail, and either would run after its caller was told it failed.
     */
    private long run(String what, WriteOnce.Effect effect, UUID id, List<Message> jobs, List<Object> args) {
        for (Message m : jobs) {
            if (!id.equals(m.batch()) || !m.isTracked()) {
                throw new IllegalArgumentException("message " + m.id() + " is not a tracked job of batch " + id);
            }
            redis.checkSize(m);
        }
        if (cluster != null) {
            return cluster.submit(what, effect, id, jobs, args);
        }
        List<Object> keys = new ArrayList<>(2 + 2 * jobs.size());
        keys.add(batchKey(prefix(), id));
        keys.add(jobsKey(prefix(), id));
        for (Message m : jobs) {
            RedisKeys k = redis.keys(m.queue());
            keys.add(k.stream());
            keys.add(k.job(m.id()));
            Map<String, String> fields = StreamFields.encode(m);
            args.addAll(List.of(m.id().toString(), m.queue(), Integer.toString(m.priority()), m.task(), m.trackForMillis(),
                    Integer.toString(fields.size() * 2)));
            ScriptReplies.addFields(args, fields);
        }
        Long reply = redis.writeOnce.sendScript(what, effect, LuaScripts.SUBMIT_BATCH, RScript.ReturnType.LONG, keys, args.toArray());
        return reply == null ? 0 : reply;
    }

    @Override
    public boolean closeBatch(UUID id) {
        boolean found = !close(id, "close").isEmpty();
        if (found && cluster != null) {
            cluster.deliverDueOrLeave(id, "close"); // the callbacks the close made due
        }
        return found;
    }

    @Override
    public Map<UUID, String> cancelBatch(UUID id) {
        Map<UUID, String> unfinished = new LinkedHashMap<>();
        List<?> flat = close(id, "cancel");
        if (!flat.isEmpty()) {
            for (int i = 1; i + 1 < flat.size(); i += 2) {
                unfinished.put(UUID.fromString(ScriptReplies.replyText(flat.get(i))), ScriptReplies.replyText(flat.get(i + 1)));
            }
            if (cluster != null) {
                cluster.markCancelRequested(unfinished);
                cluster.deliverDueOrLeave(id, "cancel");
            }
        }
        return unfinished;
    }

    /** The close script's reply after its 'ok': the jobs not ended, flat; an empty list when there is no such batch. */
    private List<?> close(UUID id, String mode) {
        List<?> reply = redis.call(mode + " batch " + id, () -> redis.client().getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE,
                LuaScripts.CLOSE_BATCH, RScript.ReturnType.LIST, List.of(batchKeyOf(id), jobsKeyOf(id)), mode, prefix(),
                cluster == null ? "" : "cluster"));
        return reply == null || reply.isEmpty() || "none".equals(ScriptReplies.replyText(reply.getFirst())) ? List.of() : reply;
    }

    @Override
    public Optional<BatchStatus> readBatch(UUID id) {
        List<?> replies = redis.pipeline("read batch " + id, batch -> {
            batch.getMap(batchKeyOf(id), StringCodec.INSTANCE).readAllMapAsync();
            batch.getMap(jobsKeyOf(id), StringCodec.INSTANCE).readAllMapAsync();
        });
        @SuppressWarnings("unchecked")
        Map<String, String> b = (Map<String, String>) replies.get(0);
        @SuppressWarnings("unchecked")
        Map<String, String> jobs = (Map<String, String>) replies.get(1);
        if (b == null || b.isEmpty()) {
            return Optional.empty();
        }
        List<UUID> failed = new ArrayList<>();
        jobs.forEach((job, v) -> {
            if (v.startsWith("D") || v.startsWith("C")) {
                failed.add(UUID.fromString(job));
            }
        });
        EnumSet<BatchStatus.Callback> fired = EnumSet.noneOf(BatchStatus.Callback.class);
        for (BatchStatus.Callback c : BatchStatus.Callback.values()) {
            if (b.containsKey("fired:" + c.name())) {
                fired.add(c);
            }
        }
        return Optional.of(new BatchStatus(id, "1".equals(b.get("open")), "1".equals(b.get("cancelRequested")), number(b, "total"),
                number(b, "succeeded"), number(b, "dead"), number(b, "cancelled"), failed, fired,
                Instant.ofEpochMilli(Long.parseLong(b.getOrDefault("createdAt", "0")))));
    }

    @Override
    public FlowCounts counts() {
        return readCounts(redis, cluster == null ? flowCountsKey(prefix()) : cluster.countsKey(), "batch");
    }

    private static int number(Map<String, String> b, String field) {
        String v = b.get(field);
        return v == null ? 0 : Integer.parseInt(v);
    }

    /**
     * Adds the batch bookkeeping of a settlement of job {@code m} of a batch to the settle script's
     * arguments ('B', index of the batch's key, job id, outcome letter); nothing for a retry.
     */
    static void addSettleArguments(Settlement s, Message m, String prefix, List<Object> keys, List<Object> args) {
        Outcome outcome = Batches.outcomeOf(s);
        if (outcome == null) {
            return;
        }
        keys.add(batchKey(prefix, m.batch()));
        keys.add(jobsKey(prefix, m.batch()));
        args.add("B");
        args.add(Integer.toString(keys.size() - 1));
        args.add(m.id().toString());
        args.add(switch (outcome) {
            case SUCCEEDED -> "S";
            case DEAD_LETTERED -> "D";
            case CANCELLED -> "C";
        });
    }
}
