package io.binomic.redis.internal;

import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Pause on Redis: what is paused is a set per queue ({@link RedisKeys#paused}); a paused message
 * waits parked in the delayed set, and {@link LuaScripts#RESUME} moves it back.
 */
final class RedisPausing implements Pausing {
    private static final int RESUME_BATCH = 1000;

    private final RedisContext redis;

    RedisPausing(RedisContext redis) {
        this.redis = redis;
    }

    /** One SMEMBERS per queue, all in one pipeline. */
    @Override
    public Map<String, PauseState> pauseStates(List<String> queues) {
        List<?> replies = redis.pipeline("read paused state of " + queues, batch -> queues.forEach(q ->
                batch.getSet(redis.keys(q).paused(), StringCodec.INSTANCE).readAllAsync()));
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

    @Override
    public void pause(String queue, Optional<String> task) {
        redis.callRetryingBrokenConnections("pause " + queue + task.map(t -> " task " + t).orElse(""), () ->
                redis.client().getSet(redis.keys(queue).paused(), StringCodec.INSTANCE).addAsync(task.orElse("*")));
    }

    /** The resume script without a member to remove: what is paused stays paused. */
    @Override
    public void unpark(String queue) {
        resumeMember(queue, "");
    }

    /** One script ({@link LuaScripts#COUNT_PARKED}) of the reader's commands: {@code binomic queues} runs it as the reader. */
    @Override
    public long parked(String queue) {
        return ScriptReplies.toLong(redis.eval("count parked of '" + queue + "'", LuaScripts.COUNT_PARKED, RScript.ReturnType.LONG,
                List.of(redis.keys(queue).delayed()), Long.toString(PauseState.PARKED_UNTIL.toEpochMilli())));
    }

    @Override
    public void resume(String queue, Optional<String> task) {
        resumeMember(queue, task.orElse("*"));
    }

    private void resumeMember(String queue, String member) {
        RedisKeys k = redis.keys(queue);
        String parked = Long.toString(PauseState.PARKED_UNTIL.toEpochMilli());
        int offset = 0;
        while (true) {
            List<Object> r = redis.evalWrite("resume " + queue + (member.isEmpty() ? " (parked)" : " " + member),
                    "the resume is on the primary only; if it fails over first, resume again", LuaScripts.RESUME, RScript.ReturnType.LIST,
                    List.of(k.paused(), k.delayed()), member, parked, Integer.toString(offset), Integer.toString(RESUME_BATCH));
            long moved = ScriptReplies.toLong(r.get(0));
            long scanned = ScriptReplies.toLong(r.get(1));
            if (scanned < RESUME_BATCH) {
                return;
            }
            offset += Math.toIntExact(scanned - moved); // moved members left the parked range
        }
    }
}
