package io.binomic.core.internal;

import io.binomic.core.TaskStats;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.atomic.LongAccumulator;

/** Per queue and task counters, updated by workers without locking. */
public final class StatsRecorder {
    private final ConcurrentHashMap<String, Counters> byKey = new ConcurrentHashMap<>();

    private static final class Counters {
        final String queue;
        final String task;
        final LongAdder succeeded = new LongAdder();
        final LongAdder failed = new LongAdder();
        final LongAdder retried = new LongAdder();
        final LongAdder deadLettered = new LongAdder();
        final LongAdder totalNanos = new LongAdder();
        final LongAccumulator maxNanos = new LongAccumulator(Math::max, 0);

        Counters(String queue, String task) {
            this.queue = queue;
            this.task = task;
        }
    }

    private Counters of(String queue, String task) {
        return byKey.computeIfAbsent(queue + '\u0000' + task, k -> new Counters(queue, task));
    }

    public void succeeded(String queue, String task, long nanos) {
        Counters c = of(queue, task);
        c.succeeded.increment();
        c.totalNanos.add(nanos);
        c.maxNanos.accumulate(nanos);
    }

    public void failed(String queue, String task, long nanos) {
        Counters c = of(queue, task);
        c.failed.increment();
        c.totalNanos.add(nanos);
        c.maxNanos.accumulate(nanos);
    }

    public void retried(String queue, String task) {
        of(queue, task).retried.increment();
    }

    public void deadLettered(String queue, String task) {
        of(queue, task).deadLettered.increment();
    }

    public List<TaskStats> snapshot() {
        return byKey.values().stream()
                .map(c -> new TaskStats(c.queue, c.task, c.succeeded.sum(), c.failed.sum(), c.retried.sum(), c.deadLettered.sum(),
                        Duration.ofNanos(c.totalNanos.sum()), Duration.ofNanos(c.maxNanos.get())))
                .sorted(Comparator.comparing(TaskStats::queue).thenComparing(TaskStats::task))
                .toList();
    }
}
