package io.binomic.core.internal.memory;

import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The minute buckets of what the workers did, per queue of the memory broker, kept for {@link ActivityBucket#KEPT}. */
final class MemoryActivity implements Activity {

    private final MemoryState state;

    MemoryActivity(MemoryState state) {
        this.state = state;
    }

    @Override
    public void addActivity(Map<String, List<ActivityBucket>> byQueue) {
        state.locked(() -> {
            Instant oldest = ActivityBucket.minuteOf(state.clock.instant().minus(ActivityBucket.KEPT));
            byQueue.forEach((name, buckets) -> {
                var activity = state.queue(name).activity;
                for (var b : buckets) {
                    activity.merge(b.minute(), b, ActivityBucket::plus);
                }
                activity.headMap(oldest).clear();
            });
        });
    }

    @Override
    public List<ActivityBucket> activity(String name, Instant since) {
        return state.locked(() -> {
            QueueState q = state.queues.get(name);
            return q == null ? List.of() : List.copyOf(q.activity.tailMap(ActivityBucket.minuteOf(since), true).values());
        });
    }
}
