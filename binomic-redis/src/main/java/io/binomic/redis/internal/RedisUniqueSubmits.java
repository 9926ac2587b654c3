package io.binomic.redis.internal;

import io.binomic.api.spi.Message;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Unique and debounced submits on Redis ({@link LuaScripts}): a unique key per claim, a debounce
 * key pointing at the delayed-set member of the job waiting under it.
 */
final class RedisUniqueSubmits implements UniqueSubmits {
    /** A debounce key outlives its job's due time by this much; the delayed set decides whether it still waits. */
    private static final Duration DEBOUNCE_KEY_SLACK = Duration.ofDays(1);

    private final RedisContext redis;

    RedisUniqueSubmits(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public UUID submitUnique(Message message, Instant dueAt) {
        return submitAllUnique(List.of(message), dueAt).getFirst();
    }

    /** One script per message, pipelined in chunks of {@value RedisContext#BULK_CHUNK}: a round trip per chunk. */
    @Override
    public List<UUID> submitAllUnique(List<Message> messages, Instant dueAt) {
        if (messages.isEmpty()) {
            return List.of();
        }
        messages.forEach(redis::checkSize);
        String what = "unique submit on queue '" + messages.getFirst().queue() + "'";
        if (messages.size() > 1 && ClusterWrites.splitByQueue(redis)) {
            // One script and its WAIT a call: a Cluster's redirect of a pipeline's tail would leave
            // its head on a primary about to be demoted, with the WAIT confirming only the tail.
            List<UUID> ids = new ArrayList<>(messages.size());
            messages.forEach(m -> ids.add(submitAllUnique(List.of(m), dueAt).getFirst()));
            return ids;
        }
        if (messages.size() == 1) {
            Message m = messages.getFirst();
            UniqueCall call = UniqueCall.of(m, dueAt, redis.keys(m.queue()));
            Object id = redis.writeScriptRetryingBrokenConnections(what, call.script(), RScript.ReturnType.VALUE, call.keys(), call.args());
            return Collections.singletonList(holder(id));
        }
        // A pipeline's reply must come within the command timeout: one of 20,000 scripts did not
        // on a loaded machine. Chunks keep each reply small; a chunk sent again is harmless, as a
        // message's own id holding its key reads as claimed by it.
        List<UUID> ids = new ArrayList<>(messages.size());
        for (int from = 0; from < messages.size(); from += RedisContext.BULK_CHUNK) {
            List<Message> chunk = messages.subList(from, Math.min(messages.size(), from + RedisContext.BULK_CHUNK));
            String chunkWhat = messages.size() <= RedisContext.BULK_CHUNK ? what
                    : what + " (messages " + from + " to " + (from + chunk.size()) + " of " + messages.size() + ")";
            List<?> replies = redis.producerPipeline(chunkWhat, batch -> {
                for (Message m : chunk) {
                    RedisKeys k = redis.keys(m.queue());
                    UniqueCall call = UniqueCall.of(m, dueAt, k);
                    batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, call.script(),
                            RScript.ReturnType.VALUE, call.keys(), call.args());
                }
            });
            replies.forEach(r -> ids.add(holder(r)));
        }
        return ids;
    }

    /** A reply of either unique script: the holder's id, or nil when the message's own id held its key. */
    private static UUID holder(Object reply) {
        return reply == null ? null : UUID.fromString(String.valueOf(reply));
    }

    private static UniqueClaim claim(Message m) {
        return UniqueClaim.of(m).orElseThrow(() -> new IllegalArgumentException("message " + m.id()
                + " has no unique claim (header '" + UniqueClaim.HEADER + "')"));
    }

    /**
     * The script that stores {@code m} under its claim, with its KEYS and ARGV: {@link LuaScripts#ENQUEUE_UNIQUE}
     * for an untracked message enqueued now whose entry has exactly {@link #ENQUEUE_UNIQUE_FIELDS} (the
     * common case: default priority, a UTF-8 payload), which takes the key's time-to-live and the
     * fields' values, their names being the script's own; {@link LuaScripts#SUBMIT_UNIQUE} for the rest
     * (a due time, a job record, a priority level's stream, a base64 payload).
     */
    private record UniqueCall(String script, List<Object> keys, Object[] args) {
        /** The fields, in order, whose values alone {@code enqueue_unique.lua} takes; it writes these names. */
        static final List<String> ENQUEUE_UNIQUE_FIELDS = List.of(StreamFields.ID, StreamFields.TASK, StreamFields.QUEUE,
                StreamFields.ATTEMPT, StreamFields.ENQUEUED_AT, StreamFields.PAYLOAD, StreamFields.HEADERS);

        static UniqueCall of(Message m, Instant dueAt, RedisKeys k) {
            UniqueClaim claim = claim(m);
            String ttl = Long.toString(Math.max(1, claim.ttl().toMillis()));
            String unique = k.unique(m.task(), claim.key());
            Map<String, String> fields = dueAt == null ? StreamFields.encode(m) : null;
            if (fields != null && !m.isTracked() && List.copyOf(fields.keySet()).equals(ENQUEUE_UNIQUE_FIELDS)) {
                List<Object> args = new ArrayList<>(1 + fields.size());
                args.add(ttl);
                args.addAll(fields.values());
                return new UniqueCall(LuaScripts.ENQUEUE_UNIQUE, List.of(unique, k.stream()), args.toArray());
            }
            List<Object> args = new ArrayList<>(List.of(m.id().toString(), ttl,
                    dueAt == null ? "E" : "S", dueAt == null ? "0" : Long.toString(dueAt.toEpochMilli()),
                    dueAt == null ? "" : StreamFields.toJson(StreamFields.encode(m)), m.isTracked() ? "1" : "0", m.task(),
                    Long.toString(System.currentTimeMillis()), m.isTracked() ? m.trackForMillis() : "0",
                    claim.releasedAtEnd() ? "1" : "0"));
            if (fields != null) {
                ScriptReplies.addFields(args, fields);
            }
            return new UniqueCall(LuaScripts.SUBMIT_UNIQUE, List.of(unique, dueAt == null ? k.stream() : k.delayed(), k.job(m.id())),
                    args.toArray());
        }
    }

    @Override
    public UUID submitDebounced(Message m, Instant dueAt) {
        redis.checkSize(m);
        String key = UniqueClaim.debounceKey(m).orElseThrow(() -> new IllegalArgumentException("message " + m.id()
                + " has no debounce key (header '" + UniqueClaim.DEBOUNCE_HEADER + "')"));
        RedisKeys k = redis.keys(m.queue());
        long keyTtl = Math.max(1, Duration.between(Instant.now(), dueAt).plus(DEBOUNCE_KEY_SLACK).toMillis());
        Object reply = redis.writeScriptRetryingBrokenConnections("debounced submit on queue '" + m.queue() + "'",
                LuaScripts.SUBMIT_DEBOUNCED, RScript.ReturnType.VALUE, List.of(k.debounce(m.task(), key), k.delayed(), k.job(m.id())),
                m.id().toString(), Long.toString(dueAt.toEpochMilli()), StreamFields.toJson(StreamFields.encode(m)),
                Long.toString(keyTtl), m.isTracked() ? "1" : "0", m.task(), Long.toString(System.currentTimeMillis()),
                m.isTracked() ? m.trackForMillis() : "0", k.jobPrefix());
        return UUID.fromString(String.valueOf(reply));
    }

    /** One script per queue, all in one pipeline. */
    @Override
    public void releaseUniqueAtStart(List<Message> started) {
        Map<String, List<Message>> byQueue = new LinkedHashMap<>();
        started.forEach(m -> byQueue.computeIfAbsent(m.queue(), q -> new ArrayList<>()).add(m));
        redis.pipeline("give back unique keys on queues " + byQueue.keySet(), batch -> byQueue.forEach((queue, messages) -> {
            RedisKeys k = redis.keys(queue);
            List<Object> keys = new ArrayList<>();
            List<Object> ids = new ArrayList<>();
            for (Message m : messages) {
                UniqueClaim.of(m).ifPresent(c -> {
                    keys.add(k.unique(m.task(), c.key()));
                    ids.add(m.id().toString());
                });
            }
            if (!keys.isEmpty()) {
                batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, LuaScripts.RELEASE_UNIQUE,
                        RScript.ReturnType.LONG, keys, ids.toArray());
            }
        }));
    }

    /**
     * Adds to a settle script's arguments the release of the unique key of an ack or a dead letter
     * (marker {@code 'U'}, see {@code release_unique} in {@code lib.lua}); nothing for other settlements.
     */
    static void addSettleArguments(Settlement s, RedisKeys k, List<Object> keys, List<Object> args) {
        if (s instanceof Settlement.RetryLater) {
            return;
        }
        Delivery d = s.delivery();
        if (d.message().isEmpty() || d.message().get().unique().isEmpty()) {
            return;
        }
        Message m = d.message().get();
        UniqueClaim.of(m).filter(UniqueClaim::releasedAtEnd).ifPresent(c -> {
            keys.add(k.unique(m.task(), c.key()));
            args.addAll(List.of("U", Integer.toString(keys.size()), m.id().toString()));
        });
    }
}
