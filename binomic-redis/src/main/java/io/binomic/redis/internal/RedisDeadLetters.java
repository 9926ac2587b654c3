package io.binomic.redis.internal;

import io.binomic.api.DeadLetter;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.DeadLetterStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.redisson.api.RScript;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.api.stream.StreamRangeArgs;
import org.redisson.client.codec.StringCodec;

/**
 * Dead letters on Redis: each queue's dead-letter stream ({@link RedisKeys#deadLetters}), written
 * by the settle script ({@link DeadLetterFields}), read by range, replayed by {@code replay.lua}.
 */
final class RedisDeadLetters implements DeadLetterStore {
    private static final int REPLAY_CHUNK = 500;

    private final RedisContext redis;

    RedisDeadLetters(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count) {
        if (count < 1) {
            return List.of();
        }
        StreamRangeArgs range = cursor.map(c -> StreamRangeArgs.startIdExclusive(ScriptReplies.parseId(c)))
                .orElse(StreamRangeArgs.startId(StreamMessageId.MIN)).endId(StreamMessageId.MAX).count(count);
        List<DeadLetter> letters = new ArrayList<>();
        range("readDeadLetters of '" + queue + "'", queue, range)
                .forEach((id, fields) -> letters.add(DeadLetterFields.decode(queue, id, fields)));
        return letters;
    }

    @Override
    public Optional<DeadLetter> readDeadLetter(String queue, String deadLetterId) {
        StreamMessageId id = parseDeadLetterId(deadLetterId);
        return range("readDeadLetter of '" + queue + "'", queue, StreamRangeArgs.startId(id).endId(id).count(1))
                .entrySet().stream().findFirst().map(e -> DeadLetterFields.decode(queue, e.getKey(), e.getValue()));
    }

    private Map<StreamMessageId, Map<String, String>> range(String what, String queue, StreamRangeArgs range) {
        return redis.call(what, () -> redis.client().<String, String>getStream(redis.keys(queue).deadLetters(), StringCodec.INSTANCE)
                .range(range));
    }

    /** A dead-letter id as {@code dlq list --details} shows it; anything else is the caller's mistake, said in one line. */
    private static StreamMessageId parseDeadLetterId(String id) {
        StreamMessageId parsed = id.matches("\\d{1,19}-\\d{1,19}") ? ScriptReplies.parseIdOrNull(id) : null;
        if (parsed == null) {
            throw new IllegalArgumentException("'" + id + "' is not a dead-letter id: Redis ids look like 1764500000000-0"
                    + " (see 'binomic dlq list --details')");
        }
        return parsed;
    }

    @Override
    public int replayDeadLetters(String queue, List<String> deadLetterIds) {
        deadLetterIds.forEach(RedisDeadLetters::parseDeadLetterId);
        RedisKeys k = redis.keys(queue);
        requeueTrackedJobs(queue, deadLetterIds);
        int replayed = 0;
        for (int from = 0; from < deadLetterIds.size(); from += REPLAY_CHUNK) {
            List<Object> args = new ArrayList<>();
            args.add(Long.toString(System.currentTimeMillis()));
            args.addAll(deadLetterIds.subList(from, Math.min(deadLetterIds.size(), from + REPLAY_CHUNK)));
            long n = redis.evalWrite("replayDeadLetters of '" + queue + "'", RedisContext.REPLAY_AGAIN, LuaScripts.REPLAY,
                    RScript.ReturnType.LONG, List.of(k.deadLetters(), k.stream()), args.toArray());
            replayed += Math.toIntExact(n);
        }
        return replayed;
    }

    /**
     * Puts the records of tracked dead letters back to QUEUED before they are replayed: a worker
     * that fetched a replayed job while its record still said DEAD_LETTERED would skip it.
     */
    private void requeueTrackedJobs(String queue, List<String> deadLetterIds) {
        RedisKeys k = redis.keys(queue);
        for (String id : deadLetterIds) {
            Optional<Message> message = readDeadLetter(queue, id).flatMap(DeadLetter::message).filter(Message::isTracked);
            message.ifPresent(m -> redis.eval("requeue job " + m.id(), LuaScripts.REQUEUE_JOB, RScript.ReturnType.LONG,
                    List.of(k.job(m.id())), m.task(), Long.toString(System.currentTimeMillis()), m.trackForMillis()));
        }
    }

    @Override
    public int deleteDeadLetters(String queue, List<String> deadLetterIds) {
        StreamMessageId[] ids = deadLetterIds.stream().map(ScriptReplies::parseIdOrNull)
                .filter(Objects::nonNull).toArray(StreamMessageId[]::new);
        if (ids.length == 0) {
            return 0;
        }
        long n = redis.call("deleteDeadLetters of '" + queue + "'",
                () -> redis.client().getStream(redis.keys(queue).deadLetters(), StringCodec.INSTANCE).remove(ids));
        return Math.toIntExact(n);
    }
}
