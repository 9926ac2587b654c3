package io.binomic.redis.internal;

import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.redisson.api.RScript;

/** The workers' activity per queue and minute on Redis: one hash a minute ({@link RedisKeys#activity}) that expires. */
final class RedisActivity implements Activity {
    private final RedisContext redis;

    RedisActivity(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public void addActivity(Map<String, List<ActivityBucket>> byQueue) {
        String ttl = Long.toString(ActivityBucket.KEPT.toMillis());
        byQueue.forEach((queue, buckets) -> {
            if (buckets.isEmpty()) {
                return;
            }
            RedisKeys k = redis.keys(queue);
            List<Object> keys = new ArrayList<>();
            List<Object> args = new ArrayList<>(List.of(ttl));
            for (ActivityBucket b : buckets) {
                keys.add(k.activity(b.minute()));
                for (long n : new long[] {b.succeeded(), b.failed(), b.retried(), b.deadLettered(), b.runNanos(), b.maxRunNanos()}) {
                    args.add(Long.toString(n));
                }
            }
            redis.eval("activity of '" + queue + "'", LuaScripts.ADD_ACTIVITY, RScript.ReturnType.LONG, keys, args.toArray());
        });
    }

    @Override
    public List<ActivityBucket> activity(String queue, Instant since) {
        RedisKeys k = redis.keys(queue);
        Instant first = ActivityBucket.minuteOf(since);
        Instant last = ActivityBucket.minuteOf(Instant.now());
        if (first.isAfter(last) || Duration.between(first, last).compareTo(ActivityBucket.KEPT) > 0) {
            first = last.minus(ActivityBucket.KEPT);
        }
        List<Instant> minutes = new ArrayList<>();
        for (Instant m = first; !m.isAfter(last); m = m.plusSeconds(60)) {
            minutes.add(m);
        }
        List<Object> flat = redis.eval("activity of '" + queue + "'", LuaScripts.READ_ACTIVITY, RScript.ReturnType.LIST,
                minutes.stream().map(m -> (Object) k.activity(m)).toList());
        List<ActivityBucket> buckets = new ArrayList<>();
        for (int i = 0; i < minutes.size(); i++) {
            long[] n = new long[6];
            for (int j = 0; j < 6; j++) {
                n[j] = Long.parseLong(String.valueOf(flat.get(i * 6 + j)));
            }
            ActivityBucket b = new ActivityBucket(minutes.get(i), n[0], n[1], n[2], n[3], n[4], n[5]);
            if (!b.isEmpty()) {
                buckets.add(b);
            }
        }
        return buckets;
    }
}
