package io.binomic.redis.internal;

import io.binomic.api.spi.QueueNames;
import io.binomic.api.spi.QueuePartitions;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.redisson.api.options.KeysScanOptions;

/**
 * The queues of this key prefix, from the keys that hold their jobs: the stream ({@link RedisKeys#stream}), a priority
 * level's stream, the delayed set, the dead letters. Found with one SCAN (on every master of a Cluster): a read for an
 * operator's suggestion, not for a worker's loop.
 */
final class RedisQueueNames implements QueueNames {
    /** What follows "}:" in a key that holds a queue's jobs; a queue may have any one of them alone (a level's jobs only, say). */
    private static final Pattern JOB_KEY = Pattern.compile("stream(:p\\d|:levels)?|delayed|dlq");

    private final RedisContext redis;

    RedisQueueNames(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public List<String> queueNames(int max) {
        String prefix = redis.config.keyPrefix() + ":{";
        String pattern = prefix + "*}:[sd]*"; // a key prefix has no glob character (BrokerConfig.keyPrefix)
        // SCAN's limit counts keys, and a queue has several (partitions, levels, delayed, dead): scan a few more
        return redis.client().getKeys().getKeysStream(KeysScanOptions.defaults().pattern(pattern).chunkSize(1000)
                        .limit((int) Math.min(Integer.MAX_VALUE, max * 8L)))
                .filter(key -> key.startsWith(prefix))
                .map(key -> queueOf(key, prefix.length()))
                .filter(Objects::nonNull)
                .map(QueuePartitions::logical)
                .distinct().sorted().limit(max).toList();
    }

    /** The queue whose jobs {@code key} holds, null for another key of the queue (a job record, a limit's, ...). */
    private static String queueOf(String key, int from) {
        int end = key.indexOf("}:", from);
        return end > from && JOB_KEY.matcher(key).region(end + 2, key.length()).matches() ? key.substring(from, end) : null;
    }
}
