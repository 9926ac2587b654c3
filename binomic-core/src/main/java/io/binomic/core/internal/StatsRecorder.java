package io.binomic.core.internal;

import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.TaskStats;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * Per queue and task counters and a duration histogram, updated by workers without locking (one
 * {@link LongAdder} increment per bucket and counter: no allocation, no broker round trip).
 */
public final class StatsRecorder {
    /**
     * Upper bounds of the duration histogram's buckets, in seconds: from a cache hit to a report
     * that runs minutes. Fixed, so that every process's histograms add up in Prometheus.
     */
    public static final double[] BUCKET_SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
    private static final long[] BUCKET_NANOS = Arrays.stream(BUCKET_SECONDS).mapToLong(seconds -> (long) (seconds * 1e9)).toArray();

    private final ConcurrentHashMap<String, Counters> byKey = new ConcurrentHashMap<>();
    /** The same counters by physical queue, then task: what a worker looks up per execution. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Counters>> byPhysicalQueue = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> reclaimsByQueue = new ConcurrentHashMap<>();
    private final FlowStats flows = new FlowStats();

    private static final class Counters {
        final String queue;
        final String task;
        final LongAdder succeeded = new LongAdder();
        final LongAdder failed = new LongAdder();
        final LongAdder cancelled = new LongAdder();
        final LongAdder retried = new LongAdder();
        final LongAdder deadLettered = new LongAdder();
        final LongAdder totalNanos = new LongAdder();
        final LongAccumulator maxNanos = new LongAccumulator(Math::max, 0);
        /** The longest execution since {@link #activitySinceLastCall} last read it. */
        final LongAccumulator maxNanosSinceRead = new LongAccumulator(Math::max, 0);
        /** The totals {@link #activitySinceLastCall} last read: its next result is the difference. */
        long readSucceeded, readFailed, readRetried, readDeadLettered, readNanos;
        /** Executions per bucket (not cumulative); the last counts those over every bound. */
        final LongAdder[] buckets = Stream.generate(LongAdder::new).limit(BUCKET_SECONDS.length + 1).toArray(LongAdder[]::new);

        void time(long nanos) {
            totalNanos.add(nanos);
            maxNanos.accumulate(nanos);
            maxNanosSinceRead.accumulate(nanos);
            int i = 0;
            while (i < BUCKET_NANOS.length && nanos > BUCKET_NANOS[i]) {
                i++;
            }
            buckets[i].increment();
        }

        Counters(String queue, String task) {
            this.queue = queue;
            this.task = task;
        }
    }

    /** What this process saw of batches and workflows. */
    public FlowStats flows() { return flows; }

    /** Counted under the logical queue: the partitions of a partitioned queue count as the queue. */
    private Counters of(String physicalQueue, String task) {
        // Two plain lookups on the hot path: the logical queue and the key are built once per
        // physical queue and task, not once per execution.
        ConcurrentHashMap<String, Counters> ofQueue = byPhysicalQueue.get(physicalQueue);
        if (ofQueue == null) {
            ofQueue = byPhysicalQueue.computeIfAbsent(physicalQueue, q -> new ConcurrentHashMap<>());
        }
        Counters counters = ofQueue.get(task);
        return counters != null ? counters : ofQueue.computeIfAbsent(task, t -> ofLogical(physicalQueue, t));
    }

    private Counters ofLogical(String physicalQueue, String task) {
        String queue = QueuePartitions.logical(physicalQueue);
        return byKey.computeIfAbsent(queue + '\u0000' + task, k -> new Counters(queue, task));
    }

    public void succeeded(String queue, String task, long nanos) {
        Counters c = of(queue, task);
        c.succeeded.increment();
        c.time(nanos);
    }

    public void failed(String queue, String task, long nanos) {
        Counters c = of(queue, task);
        c.failed.increment();
        c.time(nanos);
    }

    /**
     * An execution its submitter cancelled while it ran: counted apart from failures, and kept out
     * of the durations (an interrupted run says nothing of how long the task takes).
     */
    public void cancelled(String queue, String task, long nanos) { of(queue, task).cancelled.increment(); }

    /** Executions cancelled by their submitters, per queue and task, by the workers of this process. */
    public Map<List<String>, Long> cancellations() {
        Map<List<String>, Long> all = new TreeMap<>(Comparator.comparing((List<String> k) -> k.get(0)).thenComparing(k -> k.get(1)));
        byKey.values().forEach(c -> {
            long n = c.cancelled.sum();
            if (n > 0) {
                all.put(List.of(c.queue, c.task), n);
            }
        });
        return all;
    }

    public void retried(String queue, String task) { of(queue, task).retried.increment(); }

    public void deadLettered(String queue, String task) { of(queue, task).deadLettered.increment(); }

    /** A worker of this process took over a stranded delivery of {@code queue} (its owner stopped renewing). */
    public void reclaimed(String queue) {
        reclaimsByQueue.computeIfAbsent(QueuePartitions.logical(queue), q -> new LongAdder()).increment();
    }

    /** Reclaims per queue, by the workers of this process. */
    public Map<String, Long> reclaims() {
        Map<String, Long> all = new TreeMap<>();
        reclaimsByQueue.forEach((q, n) -> all.put(q, n.sum()));
        return all;
    }

    /**
     * A task's duration histogram: executions per bucket of {@link #BUCKET_SECONDS}, cumulative
     * (the last is every execution), and their summed duration.
     */
    public record Histogram(String queue, String task, long[] cumulative, long sumNanos) { }

    /** Every task's histogram, ordered by queue and task. */
    public List<Histogram> histograms() {
        return byKey.values().stream().map(c -> {
            long[] cumulative = new long[c.buckets.length];
            long running = 0;
            for (int i = 0; i < cumulative.length; i++) {
                running += c.buckets[i].sum();
                cumulative[i] = running;
            }
            return new Histogram(c.queue, c.task, cumulative, c.totalNanos.sum());
        }).sorted(Comparator.comparing(Histogram::queue).thenComparing(Histogram::task)).toList();
    }

    /**
     * What was counted since the previous call, per queue, as a bucket of the minute holding
     * {@code now} (queues with nothing new left out): what a process adds to the broker's
     * {@linkplain Activity#addActivity activity} every few seconds. Reads the
     * counters the workers update; adds nothing to their path.
     */
    public synchronized Map<String, ActivityBucket> activitySinceLastCall(Instant now) {
        Map<String, ActivityBucket> byQueue = new TreeMap<>();
        for (Counters c : byKey.values()) {
            long s = c.succeeded.sum();
            long f = c.failed.sum();
            long r = c.retried.sum();
            long d = c.deadLettered.sum();
            long n = c.totalNanos.sum();
            ActivityBucket b = new ActivityBucket(ActivityBucket.minuteOf(now), s - c.readSucceeded, f - c.readFailed,
                    r - c.readRetried, d - c.readDeadLettered, Math.max(0, n - c.readNanos), c.maxNanosSinceRead.getThenReset());
            c.readSucceeded = s;
            c.readFailed = f;
            c.readRetried = r;
            c.readDeadLettered = d;
            c.readNanos = n;
            if (!b.isEmpty()) {
                byQueue.merge(c.queue, b, ActivityBucket::plus);
            }
        }
        return byQueue;
    }

    public List<TaskStats> snapshot() {
        return byKey.values().stream()
                .map(c -> new TaskStats(c.queue, c.task, c.succeeded.sum(), c.failed.sum(), c.cancelled.sum(), c.retried.sum(), c.deadLettered.sum(),
                        Duration.ofNanos(c.totalNanos.sum()), Duration.ofNanos(c.maxNanos.get())))
                .sorted(Comparator.comparing(TaskStats::queue).thenComparing(TaskStats::task))
                .toList();
    }
}
