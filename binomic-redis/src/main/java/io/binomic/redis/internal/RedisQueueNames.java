package io.binomic.redis.internal;

import io.binomic.api.spi.QueueNames;
import io.binomic.api.spi.QueuePartitions;
import java.util.List;
import org.redisson.api.options.KeysScanOptions;

/**
 * The queues of this key prefix, from their stream keys ({@link RedisKeys#stream}), found with SCAN (on every master of
 * a Cluster): a read for an operator's suggestion, not for a worker's loop.
 */
final class RedisQueueNames implements QueueNames {
    private final RedisContext redis;

    RedisQueueNames(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public List<String> queueNames(int max) {
        String prefix = redis.config.keyPrefix() + ":{";
        String suffix = "}:stream";
        String pattern = prefix + "*" + suffix; // a key prefix has no glob character (BrokerConfig.keyPrefix)
        // SCAN's limit counts keys, and the streams of a partitioned queue are one key each: scan a few more
        return redis.client().getKeys().getKeysStream(KeysScanOptions.defaults().pattern(pattern).chunkSize(1000).limit((int) Math.min(Integer.MAX_VALUE, max * 4L)))
                .filter(key -> key.startsWith(prefix) && key.endsWith(suffix))
                .map(key -> QueuePartitions.logical(key.substring(prefix.length(), key.length() - suffix.length())))
                .distinct().sorted().limit(max).toList();
    }
}
