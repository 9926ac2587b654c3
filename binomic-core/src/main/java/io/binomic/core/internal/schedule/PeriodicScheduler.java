package io.binomic.core.internal.schedule;

import io.binomic.api.BrokerOutOfMemoryException;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The in-process scheduler: one virtual thread per job sleeps until the job's next tick, read
 * from the {@link Clock}, and fires it.
 *
 * <p>A tick reached late (the process was paused, the clock jumped, the previous action ran
 * long) fires once, for the most recent tick that is due; the job then waits for the first tick
 * after that. A tick never fires twice. An action that throws is logged and the job goes on.
 * {@link #close()} interrupts every job and waits briefly for running actions to end.
 */
public final class PeriodicScheduler implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PeriodicScheduler.class.getName());

    /**
     * Sleeps are cut into slices this long so that a wall-clock jump (or a suspended process)
     * is noticed soon, rather than after a sleep computed from the clock before the jump.
     */
    private static final Duration MAX_SLEEP = Duration.ofSeconds(1);

    /** How long {@link #close()} waits for running actions to react to the interrupt. */
    private static final Duration CLOSE_GRACE = Duration.ofSeconds(5);

    private final Clock clock;
    private final Object lock = new Object();
    private final List<Thread> jobs = new ArrayList<>();
    private volatile boolean closed;

    /** A scheduler that reads the time, and so every tick's due time, from {@code clock}. */
    public PeriodicScheduler(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Starts firing {@code action} at each tick of {@code trigger}, from the first tick after now.
     *
     * @throws IllegalStateException when the scheduler is closed
     */
    public void schedule(String jobName, Trigger trigger, TickAction action) {
        Objects.requireNonNull(jobName, "jobName");
        Objects.requireNonNull(trigger, "trigger");
        Objects.requireNonNull(action, "action");
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("scheduler is closed: cannot schedule job '" + jobName
                        + "'; schedule jobs before closing the scheduler");
            }
            Thread thread = Thread.ofVirtual()
                    .name("binomic-job-" + jobName)
                    .unstarted(() -> runJob(jobName, trigger, action));
            jobs.add(thread);
            thread.start();
        }
    }

    private void runJob(String jobName, Trigger trigger, TickAction action) {
        try {
            Instant due = trigger.nextAfter(clock.instant());
            while (!closed) {
                sleepUntil(due);
                Instant tick = latestDueTick(trigger, due, clock.instant());
                fire(jobName, action, tick);
                // Counted from the tick, not from now: if the action overran the next tick, that
                // tick is due at once and fires (coalesced) instead of being skipped. Being after
                // the tick, it never repeats one, even if the clock steps backwards.
                due = trigger.nextAfter(tick);
            }
        } catch (InterruptedException e) {
            // close() interrupted us: the job ends.
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, () -> "periodic job '" + jobName + "' stopped: its trigger failed", e);
        }
    }

    private void sleepUntil(Instant due) throws InterruptedException {
        while (true) {
            Duration remaining = Duration.between(clock.instant(), due);
            if (remaining.isNegative() || remaining.isZero()) {
                return;
            }
            Thread.sleep(remaining.compareTo(MAX_SLEEP) < 0 ? remaining : MAX_SLEEP);
        }
    }

    /**
     * The latest tick at or before {@code now}, knowing that {@code due} is one. Binary search
     * over the instants between them, so that a long pause under a short period costs a few dozen
     * trigger calls instead of one per missed tick.
     */
    public static Instant latestDueTick(Trigger trigger, Instant due, Instant now) {
        if (trigger.nextAfter(due).isAfter(now)) {
            return due;
        }
        // Invariant: nextAfter(low) <= now < nextAfter(high).
        Instant low = due;
        Instant high = now;
        Duration gap = Duration.between(low, high);
        while (gap.toNanos() > 1) {
            Instant middle = low.plus(gap.dividedBy(2));
            if (trigger.nextAfter(middle).isAfter(now)) {
                high = middle;
            } else {
                low = middle;
            }
            gap = Duration.between(low, high);
        }
        return trigger.nextAfter(low);
    }

    private static void fire(String jobName, TickAction action, Instant tick) throws InterruptedException {
        try {
            action.fire(tick);
        } catch (InterruptedException e) {
            throw e;
        } catch (BrokerOutOfMemoryException e) {
            // The message says all: the trace would add only the broker client's internals.
            LOG.log(Level.WARNING, () -> "periodic job '" + jobName + "' failed at tick " + tick + ": " + e.getMessage()
                    + "; it will fire again at its next tick");
        } catch (Exception e) {
            LOG.log(Level.WARNING, () -> "periodic job '" + jobName + "' failed at tick " + tick
                    + "; it will fire again at its next tick", e);
        }
    }

    /**
     * Stops every job: interrupts it and waits up to 5 seconds in all for running actions to end.
     * Calling it again does nothing.
     */
    @Override
    public void close() {
        List<Thread> toStop;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            toStop = List.copyOf(jobs);
            jobs.clear();
        }
        toStop.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + CLOSE_GRACE.toNanos();
        for (Thread thread : toStop) {
            if (thread == Thread.currentThread()) {
                continue; // close() called from an action: it cannot wait for itself
            }
            try {
                thread.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (thread.isAlive()) {
                LOG.log(Level.WARNING, () -> "periodic job thread '" + thread.getName() + "' still runs "
                        + CLOSE_GRACE.toSeconds() + " s after close: its action ignores interruption");
            }
        }
    }

    /** What a job does at a tick. */
    @FunctionalInterface
    public interface TickAction {
        void fire(Instant tick) throws Exception;
    }
}
