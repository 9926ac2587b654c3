package io.binomic.api.spi;

import java.time.Instant;

/**
 * Fires periodic jobs (CRON and INTERVAL tasks). The core's scheduler sleeps until each next tick
 * and coalesces missed ticks: a tick reached late fires once, it is not skipped and not repeated.
 * Claiming a tick across processes is the broker's job ({@link Broker#fireTick}).
 */
public interface Scheduler extends AutoCloseable {

    /** Fires {@code action} at each tick of {@code trigger} until closed. */
    void schedule(String jobName, Trigger trigger, TickAction action);

    /** Stops every job. */
    @Override
    void close();

    /** What a job does at a tick. */
    @FunctionalInterface
    interface TickAction {
        void fire(Instant tick) throws Exception;
    }
}
