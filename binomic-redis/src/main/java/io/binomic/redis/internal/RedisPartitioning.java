package io.binomic.redis.internal;

import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.redisson.api.RMap;
import org.redisson.client.codec.StringCodec;

/**
 * Partitioned queues on Redis: each partition is a queue of its own (its stream and group), and the
 * logical queue's hash {@link RedisKeys#partitions} says how many there are.
 */
final class RedisPartitioning implements Partitioning {
    private final RedisContext redis;

    RedisPartitioning(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public Map<String, QueuePartitions> partitions(List<String> queues) {
        // Read on the submit path (once a second per queue): bounded, so a submit's wait stays within its documented bound.
        return queues.isEmpty() ? Map.of() : redis.readHashes("partitions", queues, RedisKeys::partitions, fields -> {
            int count = Integer.parseInt(String.valueOf(fields.get("count")));
            int highest = Integer.parseInt(String.valueOf(fields.get("highest")));
            return new QueuePartitions(count, Math.max(count, highest));
        }, "binomic queue partitions {0} COUNT", true);
    }

    @Override
    public void setPartitions(String queue, QueuePartitions set) {
        Objects.requireNonNull(set, "partitions must not be null");
        for (String partition : set.all(queue)) {
            redis.call("create the stream of partition '" + partition + "'", () -> {
                redis.createGroup(redis.client(), partition);
                return null;
            });
        }
        // the streams first: a worker that sees the new partitions finds their groups
        String key = redis.keys(queue).partitions();
        redis.callRetryingBrokenConnections("set the partitions of " + queue, () -> {
            RMap<String, String> map = redis.client().getMap(key, StringCodec.INSTANCE);
            return set.equals(QueuePartitions.ONE) ? map.deleteAsync()
                    : map.putAllAsync(Map.of("count", Integer.toString(set.count()), "highest", Integer.toString(set.highest())));
        });
    }
}
