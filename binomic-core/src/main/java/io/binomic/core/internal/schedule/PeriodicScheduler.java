package io.binomic.core.internal.schedule;

import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Trigger;
import java.time.Clock;

/** The in-process scheduler. TODO: implementation. */
public final class PeriodicScheduler implements Scheduler {
    private final Clock clock;

    public PeriodicScheduler(Clock clock) {
        this.clock = clock;
    }

    @Override
    public void schedule(String jobName, Trigger trigger, TickAction action) {
        throw new UnsupportedOperationException("TODO " + clock);
    }

    @Override
    public void close() {
    }
}
