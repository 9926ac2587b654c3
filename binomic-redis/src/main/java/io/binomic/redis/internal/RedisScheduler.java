package io.binomic.redis.internal;

import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.TickResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The durable scheduler of a {@link RedisBroker}: each queue's delayed set ({@code ZADD}, score =
 * due epoch ms), which survives any process dying, and one claim per periodic job, so N clients
 * fire each tick once. It writes through its broker's connection and plumbing: the same retries of
 * a broken connection, the same {@code WAIT} for replicas when {@code wait.replicas} asks for it, the
 * same reload of the Lua scripts after {@code NOSCRIPT}; and the broker's settle writes retries to
 * the same delayed set, atomically with the ack.
 */
final class RedisScheduler implements Scheduler {
    private final RedisBroker broker;
    private final RedisContext redis;

    RedisScheduler(RedisBroker broker) {
        this.broker = Objects.requireNonNull(broker, "broker");
        this.redis = broker.redis();
    }

    @Override
    public void schedule(Message message, Instant dueAt) {
        redis.checkSize(message);
        if (message.isTracked()) {
            scheduleTracked(message, dueAt);
            return;
        }
        String member = StreamFields.toJson(StreamFields.encode(message));
        String delayed = redis.keys(message.queue()).delayed();
        redis.producerWrite("schedule on queue '" + message.queue() + "'",
                batch -> batch.getScoredSortedSet(delayed, StringCodec.INSTANCE).addAsync(dueAt.toEpochMilli(), member),
                () -> redis.client().getScoredSortedSet(delayed, StringCodec.INSTANCE).addAsync(dueAt.toEpochMilli(), member));
    }

    /** One {@code ZADD} of up to {@value RedisContext#BULK_CHUNK} members per round trip. */
    @Override
    public void scheduleAll(List<Message> messages, Instant dueAt) {
        messages.forEach(redis::checkSize);
        double score = dueAt.toEpochMilli();
        Map<String, Map<String, Double>> membersByQueue = new LinkedHashMap<>();
        for (Message m : messages) {
            if (m.isTracked()) {
                scheduleTracked(m, dueAt); // one round trip each: tracked DELAY jobs in bulk are rare
                continue;
            }
            membersByQueue.computeIfAbsent(m.queue(), q -> new LinkedHashMap<>())
                    .put(StreamFields.toJson(StreamFields.encode(m)), score);
        }
        membersByQueue.forEach((queue, members) -> {
            List<Map.Entry<String, Double>> entries = List.copyOf(members.entrySet());
            for (int from = 0; from < entries.size(); from += RedisContext.BULK_CHUNK) {
                Map<String, Double> chunk = new LinkedHashMap<>();
                entries.subList(from, Math.min(entries.size(), from + RedisContext.BULK_CHUNK))
                        .forEach(e -> chunk.put(e.getKey(), e.getValue()));
                // ZADD of the same member is idempotent, so a retry after a broken connection adds nothing twice.
                String delayed = redis.keys(queue).delayed();
                redis.producerWrite("scheduleAll on queue '" + queue + "'",
                        batch -> batch.<String>getScoredSortedSet(delayed, StringCodec.INSTANCE).addAllAsync(chunk),
                        () -> redis.client().<String>getScoredSortedSet(delayed, StringCodec.INSTANCE).addAllAsync(chunk));
            }
        });
    }

    private void scheduleTracked(Message message, Instant dueAt) {
        RedisKeys k = redis.keys(message.queue());
        String member = StreamFields.toJson(StreamFields.encode(message));
        redis.writeScriptRetryingBrokenConnections("schedule on queue '" + message.queue() + "'", LuaScripts.SCHEDULE_TRACKED,
                RScript.ReturnType.LONG, List.of(k.delayed(), k.job(message.id())), message.task(), Long.toString(System.currentTimeMillis()),
                message.trackForMillis(), Long.toString(dueAt.toEpochMilli()), member);
    }

    /** Due by Redis' clock ({@code TIME}), not by {@code now}: a worker whose clock runs ahead cannot move messages early. */
    @Override
    public int moveDue(String queue, Instant now, int max) {
        if (max < 1) {
            return 0;
        }
        RedisKeys k = redis.keys(queue);
        long moved = redis.evalWrite("moveDue on queue '" + queue + "'", RedisContext.MOVE_AGAIN, LuaScripts.MOVE_DUE,
                RScript.ReturnType.LONG, List.of(k.delayed(), k.stream()), Integer.toString(max));
        return Math.toIntExact(moved);
    }

    @Override
    public Optional<Instant> nextDue(String queue) {
        Double score = redis.call("nextDue on queue '" + queue + "'",
                () -> redis.client().getScoredSortedSet(redis.keys(queue).delayed(), StringCodec.INSTANCE).firstScore());
        return Optional.ofNullable(score).map(s -> Instant.ofEpochMilli(s.longValue()));
    }

    /** One script: the claim and the XADD of the tick's message, judged by Redis' clock ({@code TIME}), due and superseded alike. */
    @Override
    public TickResult fireTick(String jobName, Instant tick, Instant supersededAt, Message message, Duration claimLifetime) {
        redis.checkSize(message);
        RedisKeys k = redis.keys(message.queue());
        List<Object> args = new ArrayList<>(List.of(Long.toString(tick.toEpochMilli()), Long.toString(supersededAt.toEpochMilli()),
                Long.toString(Math.max(1, claimLifetime.toMillis()))));
        StreamFields.encode(message).forEach((name, value) -> {
            if (!name.equals(StreamFields.ENQUEUED_AT)) { // the script stamps Redis' time
                args.add(name);
                args.add(value);
            }
        });
        List<Object> r = redis.evalWrite("fireTick of '" + jobName + "'", RedisContext.TICK_AGAIN, LuaScripts.CLAIM_TICK,
                RScript.ReturnType.LIST, List.of(k.cron(jobName), k.stream()), args.toArray());
        TickResult.Outcome outcome = switch (Math.toIntExact(ScriptReplies.toLong(r.get(0)))) {
            case 0 -> TickResult.Outcome.NOT_DUE;
            case 1 -> TickResult.Outcome.ALREADY_FIRED;
            case 3 -> TickResult.Outcome.SUPERSEDED;
            default -> TickResult.Outcome.FIRED;
        };
        if (outcome == TickResult.Outcome.FIRED && message.isTracked()) {
            // After the tick's script, not in it: a worker that ran the tick first created the record itself.
            redis.eval("record of tick job " + message.id(), LuaScripts.REQUEUE_JOB, RScript.ReturnType.LONG,
                    List.of(k.job(message.id())), message.task(), Long.toString(System.currentTimeMillis()), message.trackForMillis());
        }
        return new TickResult(outcome, Instant.ofEpochMilli(ScriptReplies.toLong(r.get(1))));
    }

    @Override
    public Optional<Instant> lastFiredTick(String queue, String jobName) {
        List<Object> r = redis.eval("last tick of '" + jobName + "'", LuaScripts.READ_TICK, RScript.ReturnType.LIST,
                List.of(redis.keys(queue).cron(jobName)));
        return r.isEmpty() || r.getFirst() == null ? Optional.empty() : Optional.of(Instant.ofEpochMilli(Long.parseLong(String.valueOf(r.getFirst()))));
    }

    /** Nothing of its own to release: the connection is the broker's, closed with it. */
    @Override
    public void close() {
    }

    @Override
    public String toString() { return "RedisScheduler[" + broker + "]"; }
}
