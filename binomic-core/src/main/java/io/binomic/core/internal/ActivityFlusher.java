package io.binomic.core.internal;

import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Broker;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Adds what the workers of this process did to the broker's per-minute activity (the dashboard's
 * charts) every {@link #PERIOD}: one write per queue per period, whatever the message rate. What a
 * write could not store (the broker unreachable) is kept and sent with the next, in its own minute,
 * for as long as the broker keeps buckets.
 */
public final class ActivityFlusher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ActivityFlusher.class.getName());
    /** How often the counts go to the broker: the charts lag by at most this much. */
    public static final Duration PERIOD = Duration.ofSeconds(5);

    private final StatsRecorder stats;
    private final Broker broker;
    private final Clock clock;
    /** Buckets not yet stored, by queue, then minute. Only touched under this object's lock. */
    private final Map<String, TreeMap<Instant, ActivityBucket>> unsent = new TreeMap<>();
    private final Thread thread;
    /** Counted down by {@link #close}: ends the wait between flushes without interrupting a write. */
    private final CountDownLatch stopping = new CountDownLatch(1);
    private boolean failing;

    // Package-private for tests, which flush by hand.
    ActivityFlusher(StatsRecorder stats, Broker broker, Clock clock) {
        this.stats = stats;
        this.broker = broker;
        this.clock = clock;
        // A platform thread: CPU-bound handlers that hold every carrier must not stop the charts.
        this.thread = Thread.ofPlatform().daemon().name("binomic-activity").unstarted(this::loop);
    }

    /** Starts flushing {@code stats} to {@code broker}. */
    public static ActivityFlusher start(StatsRecorder stats, Broker broker, Clock clock) {
        ActivityFlusher flusher = new ActivityFlusher(stats, broker, clock);
        flusher.thread.start();
        return flusher;
    }

    private void loop() {
        try {
            while (!stopping.await(PERIOD.toMillis(), TimeUnit.MILLISECONDS)) {
                flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sends what was counted since the last flush; true when everything is stored. */
    public synchronized boolean flush() {
        Instant now = clock.instant();
        stats.activitySinceLastCall(now).forEach((queue, bucket) ->
                unsent.computeIfAbsent(queue, q -> new TreeMap<>()).merge(bucket.minute(), bucket, ActivityBucket::plus));
        Instant oldest = ActivityBucket.minuteOf(now.minus(ActivityBucket.KEPT));
        unsent.values().forEach(byMinute -> byMinute.headMap(oldest).clear());
        unsent.values().removeIf(Map::isEmpty);
        if (unsent.isEmpty()) {
            return true;
        }
        Map<String, List<ActivityBucket>> batch = new TreeMap<>();
        unsent.forEach((queue, byMinute) -> batch.put(queue, new ArrayList<>(byMinute.values())));
        try {
            broker.capability(Activity.class).ifPresent(activity -> activity.addActivity(batch));
            unsent.clear();
            if (failing) {
                LOG.log(Level.INFO, "activity counts are written again");
                failing = false;
            }
            return true;
        } catch (RuntimeException e) {
            if (!failing) {
                LOG.log(Level.WARNING, "activity counts (the dashboard''s charts) could not be written; kept for the next try: {0}",
                        e.getMessage());
                failing = true;
            }
            return false;
        }
    }

    /**
     * Stops the thread and sends what is left, once, unless the last write failed: a close must
     * not wait out a broker outage for the charts (what is left then is lost to them, never to
     * the queue).
     */
    @Override
    public void close() {
        stopping.countDown();
        try {
            thread.join(Duration.ofSeconds(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (!failing) {
                flush();
            }
        }
    }
}
