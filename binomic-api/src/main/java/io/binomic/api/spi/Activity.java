package io.binomic.api.spi;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A {@link Broker} capability: per-minute counts of what the workers of every process did
 * (see {@link ActivityBucket}), shared by all processes. Without it nothing is counted and the
 * dashboard shows no activity.
 */
public interface Activity {

    /**
     * Adds what the workers of one process did, per queue, to the minute buckets every process
     * adds to: called every few seconds with the counts since the last call, never per message
     * (on Redis: one script per queue). A bucket older than {@link ActivityBucket#KEPT} is forgotten.
     */
    void addActivity(Map<String, List<ActivityBucket>> byQueue);

    /**
     * The minute buckets of {@code queue} from {@code since} (inclusive, rounded down to its
     * minute), oldest first; minutes in which nothing was counted may be absent.
     */
    List<ActivityBucket> activity(String queue, Instant since);
}
