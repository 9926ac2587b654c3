package io.binomic.redis.internal;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueClaim;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RMap;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Unique jobs, debounce and pause on Redis ({@link FlowScripts}), through the broker's connection
 * and plumbing (retries of a broken connection, {@code WAIT} for replicas, script reload).
 */
final class RedisFlowControl {
    /** A debounce key outlives its job's due time by this much; the delayed set decides whether it still waits. */
    private static final Duration DEBOUNCE_KEY_SLACK = Duration.ofDays(1);
    private static final int RESUME_BATCH = 1000;

    private final RedisBroker broker;

    RedisFlowControl(RedisBroker broker) {
        this.broker = broker;
    }

    /** One script per message, all in one pipeline: one round trip for the lot. */
    List<UUID> submitAllUnique(List<Message> messages, Instant dueAt) {
        messages.forEach(broker::checkSize);
        String what = "unique submit on queue '" + messages.getFirst().queue() + "'";
        List<?> replies = broker.callRetryingBrokenConnections(what, () -> {
            if (messages.size() == 1 && !broker.replicaWait.on()) {
                Message m = messages.getFirst();
                RedisKeys k = broker.keys(m.queue());
                return List.of(broker.client().getScript(StringCodec.INSTANCE).<Object>eval(k.stream(), RScript.Mode.READ_WRITE,
                        FlowScripts.SUBMIT_UNIQUE, RScript.ReturnType.VALUE, uniqueKeys(m, dueAt, k), uniqueArguments(m, dueAt)));
            }
            RBatch batch = broker.client().createBatch(broker.writeOptions());
            for (Message m : messages) {
                RedisKeys k = broker.keys(m.queue());
                batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, FlowScripts.SUBMIT_UNIQUE,
                        RScript.ReturnType.VALUE, uniqueKeys(m, dueAt, k), uniqueArguments(m, dueAt));
            }
            return broker.confirmed(what, RedisBroker.SUBMIT_AGAIN, batch.execute()).getResponses();
        });
        List<UUID> ids = new ArrayList<>(replies.size());
        replies.forEach(r -> ids.add(UUID.fromString(String.valueOf(r))));
        return ids;
    }

    private static UniqueClaim claim(Message m) {
        return UniqueClaim.of(m).orElseThrow(() -> new IllegalArgumentException("message " + m.id()
                + " has no unique claim (header '" + UniqueClaim.HEADER + "')"));
    }

    /** KEYS of {@link FlowScripts#SUBMIT_UNIQUE}. */
    private static List<Object> uniqueKeys(Message m, Instant dueAt, RedisKeys k) {
        return List.of(k.unique(m.task(), claim(m).key()), dueAt == null ? k.stream() : k.delayed(), k.job(m.id()));
    }

    /** ARGV of {@link FlowScripts#SUBMIT_UNIQUE}. */
    private static Object[] uniqueArguments(Message m, Instant dueAt) {
        UniqueClaim claim = claim(m);
        List<Object> args = new ArrayList<>(List.of(m.id().toString(), Long.toString(Math.max(1, claim.ttl().toMillis())),
                dueAt == null ? "E" : "S", dueAt == null ? "0" : Long.toString(dueAt.toEpochMilli()),
                dueAt == null ? "" : StreamFields.toJson(StreamFields.encode(m)), m.isTracked() ? "1" : "0", m.task(),
                Long.toString(System.currentTimeMillis()), m.isTracked() ? m.trackForMillis() : "0",
                claim.releasedAtEnd() ? "1" : "0"));
        if (dueAt == null) {
            StreamFields.encode(m).forEach((name, value) -> {
                args.add(name);
                args.add(value);
            });
        }
        return args.toArray();
    }

    UUID submitDebounced(Message m, Instant dueAt) {
        broker.checkSize(m);
        String key = UniqueClaim.debounceKey(m).orElseThrow(() -> new IllegalArgumentException("message " + m.id()
                + " has no debounce key (header '" + UniqueClaim.DEBOUNCE_HEADER + "')"));
        RedisKeys k = broker.keys(m.queue());
        long keyTtl = Math.max(1, Duration.between(Instant.now(), dueAt).plus(DEBOUNCE_KEY_SLACK).toMillis());
        Object reply = broker.<Object>callRetryingBrokenConnections("debounced submit on queue '" + m.queue() + "'", () -> {
            Object[] args = {m.id().toString(), Long.toString(dueAt.toEpochMilli()), StreamFields.toJson(StreamFields.encode(m)),
                    Long.toString(keyTtl), m.isTracked() ? "1" : "0", m.task(), Long.toString(System.currentTimeMillis()),
                    m.isTracked() ? m.trackForMillis() : "0", k.jobPrefix()};
            List<Object> keys = List.of(k.debounce(m.task(), key), k.delayed(), k.job(m.id()));
            if (!broker.replicaWait.on()) {
                return broker.client().getScript(StringCodec.INSTANCE).eval(k.stream(), RScript.Mode.READ_WRITE,
                        FlowScripts.SUBMIT_DEBOUNCED, RScript.ReturnType.VALUE, keys, args);
            }
            RBatch batch = broker.client().createBatch(broker.writeOptions());
            batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, FlowScripts.SUBMIT_DEBOUNCED,
                    RScript.ReturnType.VALUE, keys, args);
            return broker.confirmed("debounced submit", RedisBroker.SUBMIT_AGAIN, batch.execute()).getResponses().getFirst();
        });
        return UUID.fromString(String.valueOf(reply));
    }

    /** One script per queue, all in one pipeline. */
    void releaseUniqueAtStart(List<Message> started) {
        Map<String, List<Message>> byQueue = new LinkedHashMap<>();
        started.forEach(m -> byQueue.computeIfAbsent(m.queue(), q -> new ArrayList<>()).add(m));
        broker.call("give back unique keys on queues " + byQueue.keySet(), () -> {
            RBatch batch = broker.client().createBatch(BatchOptions.defaults());
            byQueue.forEach((queue, messages) -> {
                RedisKeys k = broker.keys(queue);
                List<Object> keys = new ArrayList<>();
                List<Object> ids = new ArrayList<>();
                for (Message m : messages) {
                    UniqueClaim.of(m).ifPresent(c -> {
                        keys.add(k.unique(m.task(), c.key()));
                        ids.add(m.id().toString());
                    });
                }
                if (!keys.isEmpty()) {
                    batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, FlowScripts.RELEASE_UNIQUE,
                            RScript.ReturnType.LONG, keys, ids.toArray());
                }
            });
            return batch.execute();
        });
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
            args.add("U");
            args.add(Integer.toString(keys.size()));
            args.add(m.id().toString());
        });
    }

    /** One SMEMBERS per queue, all in one pipeline. */
    Map<String, PauseState> pauseStates(List<String> queues) {
        List<?> replies = broker.call("read paused state of " + queues, () -> {
            RBatch batch = broker.client().createBatch(BatchOptions.defaults());
            for (String q : queues) {
                batch.getSet(broker.keys(q).paused(), StringCodec.INSTANCE).readAllAsync();
            }
            return batch.execute().getResponses();
        });
        Map<String, PauseState> out = new LinkedHashMap<>();
        for (int i = 0; i < queues.size(); i++) {
            Set<String> members = new HashSet<>();
            if (replies.get(i) instanceof Collection<?> c) {
                c.forEach(o -> members.add(String.valueOf(o)));
            }
            boolean queue = members.remove("*");
            out.put(queues.get(i), queue || !members.isEmpty() ? new PauseState(queue, members) : PauseState.NONE);
        }
        return out;
    }

    Map<String, QueueLimits> queueLimits(List<String> queues) {
        List<?> replies = broker.call("read the limits of " + queues, () -> {
            RBatch batch = broker.client().createBatch(BatchOptions.defaults());
            for (String q : queues) {
                batch.<String, String>getMap(broker.keys(q).queueLimits(), StringCodec.INSTANCE).readAllMapAsync();
            }
            return batch.execute().getResponses();
        });
        Map<String, QueueLimits> out = new LinkedHashMap<>();
        for (int i = 0; i < queues.size(); i++) {
            if (replies.get(i) instanceof Map<?, ?> fields && !fields.isEmpty()) {
                try {
                    out.put(queues.get(i), decodeLimits(fields));
                } catch (RuntimeException e) {
                    // a hand-edited hash: say which, and go on without it rather than stop every worker
                    System.getLogger(RedisFlowControl.class.getName()).log(System.Logger.Level.WARNING,
                            "ignoring the limits of queue {0}: {1} ({2}); set them again with: binomic queue limit {0} ...",
                            queues.get(i), fields, e.getMessage());
                }
            }
        }
        return out;
    }

    private static QueueLimits decodeLimits(Map<?, ?> fields) {
        var b = QueueLimits.builder();
        Object permits = fields.get("rate.permits");
        if (permits != null) {
            var rate = RateLimit.of(Integer.parseInt(String.valueOf(permits)),
                    Duration.ofMillis(Long.parseLong(String.valueOf(fields.get("rate.periodMillis")))));
            Object burst = fields.get("rate.burst");
            b.rateLimit(burst == null ? rate : rate.withBurst(Integer.parseInt(String.valueOf(burst))));
        }
        Object concurrency = fields.get("concurrency");
        if (concurrency != null) {
            b.concurrencyLimit(Integer.parseInt(String.valueOf(concurrency)));
        }
        return b.build();
    }

    Map<String, QueuePartitions> partitions(List<String> queues) {
        List<?> replies = broker.call("read the partitions of " + queues, () -> {
            RBatch batch = broker.client().createBatch(BatchOptions.defaults());
            for (String q : queues) {
                batch.<String, String>getMap(broker.keys(q).partitions(), StringCodec.INSTANCE).readAllMapAsync();
            }
            return batch.execute().getResponses();
        });
        Map<String, QueuePartitions> out = new LinkedHashMap<>();
        for (int i = 0; i < queues.size(); i++) {
            if (replies.get(i) instanceof Map<?, ?> fields && !fields.isEmpty()) {
                try {
                    int count = Integer.parseInt(String.valueOf(fields.get("count")));
                    int highest = Integer.parseInt(String.valueOf(fields.get("highest")));
                    out.put(queues.get(i), new QueuePartitions(count, Math.max(count, highest)));
                } catch (RuntimeException e) {
                    System.getLogger(RedisFlowControl.class.getName()).log(System.Logger.Level.WARNING,
                            "ignoring the partitions of queue {0}: {1} ({2}); set them again with: binomic queue partitions {0} COUNT",
                            queues.get(i), fields, e.getMessage());
                }
            }
        }
        return out;
    }

    void setPartitions(String queue, QueuePartitions set) {
        String key = broker.keys(queue).partitions();
        broker.callRetryingBrokenConnections("set the partitions of " + queue, () -> {
            RMap<String, String> map = broker.client().getMap(key, StringCodec.INSTANCE);
            if (set.equals(QueuePartitions.ONE)) {
                map.delete();
            } else {
                map.putAll(Map.of("count", Integer.toString(set.count()), "highest", Integer.toString(set.highest())));
            }
            return null;
        });
    }

    void setQueueLimits(String queue, QueueLimits limits) {
        List<Object> args = new ArrayList<>();
        limits.rate().ifPresent(r -> args.addAll(List.of("rate.permits", Integer.toString(r.permits()),
                "rate.periodMillis", Long.toString(r.period().toMillis()), "rate.burst", Integer.toString(r.burst()))));
        limits.concurrency().ifPresent(c -> args.addAll(List.of("concurrency", Integer.toString(c))));
        broker.callRetryingBrokenConnections("set the limits of " + queue, () ->
                broker.client().getScript(StringCodec.INSTANCE).eval(broker.keys(queue).queueLimits(), RScript.Mode.READ_WRITE,
                        FlowScripts.SET_QUEUE_LIMITS, RScript.ReturnType.LONG,
                        List.of(broker.keys(queue).queueLimits(), broker.keys(queue).stream()), args.toArray()));
    }

    void pause(String queue, Optional<String> task) {
        broker.callRetryingBrokenConnections("pause " + queue + task.map(t -> " task " + t).orElse(""), () ->
                broker.client().getSet(broker.keys(queue).paused(), StringCodec.INSTANCE).add(task.orElse("*")));
    }

    /** The resume script without a member to remove: what is paused stays paused. */
    void unpark(String queue) {
        resumeMember(queue, "");
    }

    void resume(String queue, Optional<String> task) {
        resumeMember(queue, task.orElse("*"));
    }

    private void resumeMember(String queue, String member) {
        RedisKeys k = broker.keys(queue);
        String parked = Long.toString(PauseState.PARKED_UNTIL.toEpochMilli());
        int offset = 0;
        while (true) {
            List<Object> r = broker.evalWrite("resume " + queue + (member.isEmpty() ? " (parked)" : " " + member),
                    "the resume is on the primary only; if it fails over first, resume again", FlowScripts.RESUME, RScript.ReturnType.LIST,
                    List.of(k.paused(), k.delayed()), member, parked, Integer.toString(offset), Integer.toString(RESUME_BATCH));
            long moved = RedisBroker.toLong(r.get(0));
            long scanned = RedisBroker.toLong(r.get(1));
            if (scanned < RESUME_BATCH) {
                return;
            }
            offset += Math.toIntExact(scanned - moved); // moved members left the parked range
        }
    }
}
