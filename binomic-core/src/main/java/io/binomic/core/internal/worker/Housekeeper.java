package io.binomic.core.internal.worker;

import java.time.Duration;

/**
 * The periodic broker calls of a worker that take no slot, on a thread of their own: the
 * partitions of its queues, their paused state and limits (read ahead of the fetcher's need, so a
 * fetch or a start seldom waits for them), the clearing of settled entries, and the keeping of
 * consumers. On the fetch thread, each would add its round trip to the fetch rounds it falls in:
 * over a link of 100 ms round trips, several of them in a row between reads left the slots idle
 * most of the time. What the fetcher calls when they are stale is unchanged, so a stalled
 * housekeeper costs speed, never a guarantee.
 */
final class Housekeeper implements ControlLoop.Round {
    /** Often enough to read each view ahead of its age limit (the paused state's is 500 ms). */
    private static final Duration TICK = Duration.ofMillis(50);

    private final WorkerContext context;
    private final WorkerQueues queues;
    private final FlowGate flow;
    private final FlowLimiter limiter;
    private final Reclaimer reclaimer;
    /** Since when the round of calls under way waits; 0 when none is. Read by the worker's health. */
    volatile long callSinceNanos;

    Housekeeper(WorkerContext context, WorkerQueues queues, FlowGate flow, FlowLimiter limiter, Reclaimer reclaimer) {
        this.context = context;
        this.queues = queues;
        this.flow = flow;
        this.limiter = limiter;
        this.reclaimer = reclaimer;
    }

    @Override
    public boolean run() throws InterruptedException {
        if (!context.active().getAsBoolean()) {
            return false;
        }
        callSinceNanos = System.nanoTime();
        try {
            queues.refresh();
            flow.refreshAhead();
            limiter.refreshAhead();
            reclaimer.keepConsumersIfDue(queues.all());
            reclaimer.removeSettledIfDue(queues.all());
        } finally {
            callSinceNanos = 0;
        }
        Thread.sleep(TICK.toMillis());
        return true;
    }
}
