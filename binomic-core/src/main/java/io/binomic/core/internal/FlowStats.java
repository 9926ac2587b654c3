package io.binomic.core.internal;

import io.binomic.api.spi.QueuePartitions;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * What this process saw of batches and workflows, counted without a broker call: the batches and
 * workflows it submitted and cancelled, and the batch callbacks its workers started, with how long
 * each waited after its batch fired it. Neither broker keeps an index of batches or workflows, so
 * how many are open is not known without a scan, which a scrape must not do.
 */
public final class FlowStats {
    private static final long[] BUCKET_NANOS = Arrays.stream(StatsRecorder.BUCKET_SECONDS).mapToLong(s -> (long) (s * 1e9)).toArray();

    private final LongAdder batchesSubmitted = new LongAdder();
    private final LongAdder batchesCancelled = new LongAdder();
    private final LongAdder workflowsSubmitted = new LongAdder();
    private final LongAdder workflowsCancelled = new LongAdder();
    private final ConcurrentHashMap<List<String>, Lag> callbacks = new ConcurrentHashMap<>();

    private static final class Lag {
        final LongAdder totalNanos = new LongAdder();
        /** Callbacks per bucket of {@link StatsRecorder#BUCKET_SECONDS} (not cumulative); the last counts those over every bound. */
        final LongAdder[] buckets = Stream.generate(LongAdder::new).limit(BUCKET_NANOS.length + 1).toArray(LongAdder[]::new);
    }

    /**
     * A callback's wait, by queue and task: its buckets as {@link StatsRecorder.Histogram} has them
     * (cumulative, the last is every callback started) and the summed wait.
     */
    public record CallbackLag(String queue, String task, long[] cumulative, long sumNanos) {
        /** Callbacks started. */
        public long count() { return cumulative[cumulative.length - 1]; }
    }

    public void batchSubmitted() { batchesSubmitted.increment(); }

    public void batchCancelled() { batchesCancelled.increment(); }

    public void workflowSubmitted() { workflowsSubmitted.increment(); }

    public void workflowCancelled() { workflowsCancelled.increment(); }

    public long batchesSubmitted() { return batchesSubmitted.sum(); }

    public long batchesCancelled() { return batchesCancelled.sum(); }

    public long workflowsSubmitted() { return workflowsSubmitted.sum(); }

    public long workflowsCancelled() { return workflowsCancelled.sum(); }

    /**
     * A worker of this process starts a batch's callback for the first time, {@code lag} after the
     * broker enqueued it (in the step that ended the batch's last job, or its first dead letter). A
     * negative lag (the broker's clock ahead of this one) counts as none.
     */
    public void callbackStarted(String queue, String task, Duration lag) {
        long nanos = Math.max(0, lag.toNanos());
        Lag l = callbacks.computeIfAbsent(List.of(QueuePartitions.logical(queue), task), k -> new Lag());
        l.totalNanos.add(nanos);
        int i = 0;
        while (i < BUCKET_NANOS.length && nanos > BUCKET_NANOS[i]) {
            i++;
        }
        l.buckets[i].increment();
    }

    /** Every callback queue and task's lag, ordered by queue and task. */
    public List<CallbackLag> callbackLags() {
        return callbacks.entrySet().stream().map(e -> {
            LongAdder[] b = e.getValue().buckets;
            long[] cumulative = new long[b.length];
            long running = 0;
            for (int i = 0; i < b.length; i++) {
                running += b[i].sum();
                cumulative[i] = running;
            }
            return new CallbackLag(e.getKey().get(0), e.getKey().get(1), cumulative, e.getValue().totalNanos.sum());
        }).sorted(Comparator.comparing(CallbackLag::queue).thenComparing(CallbackLag::task)).toList();
    }
}
