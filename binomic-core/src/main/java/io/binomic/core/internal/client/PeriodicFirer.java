package io.binomic.core.internal.client;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.TickResult;
import io.binomic.core.internal.schedule.PeriodicScheduler;
import io.binomic.core.internal.schedule.Trigger;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Fires the CRON and INTERVAL tasks of a client: sleeps until each one's next tick in this
 * process, then has the broker's scheduler claim the tick and enqueue its job in one step, so
 * every client may fire the same task and each tick still runs once.
 */
public final class PeriodicFirer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PeriodicFirer.class.getName());
    /** A tick's claim lives this many periods... */
    private static final int CLAIM_PERIODS = 3;
    /** ...and at least this long. */
    private static final Duration MIN_CLAIM_LIFETIME = Duration.ofMinutes(1);
    /** A clock this far ahead of the broker's is worth a warning (a few ms are normal between hosts). */
    private static final Duration CLOCK_SKEW_WARNING = Duration.ofSeconds(1);
    /**
     * A tick that reaches the broker once the next is due is superseded, but only when at least
     * this late: under a period shorter than the round trip to the broker, every tick would
     * otherwise come too late and none would fire.
     */
    private static final Duration MIN_SUPERSEDED_LATENESS = Duration.ofSeconds(1);

    /** Sleeps until each periodic task's next tick, in this process. */
    private final PeriodicScheduler ticker;
    private final Supplier<Scheduler> scheduler;
    private final JobMessages messages;
    private volatile boolean clockSkewWarned;

    public PeriodicFirer(Clock clock, Supplier<Scheduler> scheduler, JobMessages messages) {
        this.ticker = new PeriodicScheduler(clock);
        this.scheduler = scheduler;
        this.messages = messages;
    }

    /** Fires each CRON and INTERVAL task of {@code tasks} at its ticks, until closed; other tasks are left alone. */
    public void start(Collection<Task<?, ?>> tasks) {
        tasks.forEach(this::schedulePeriodic);
    }

    private void schedulePeriodic(Task<?, ?> task) {
        Trigger trigger = switch (task.mode()) {
            case CRON -> Trigger.cron(task.cron().orElseThrow(), task.zone());
            case INTERVAL -> Trigger.every(task.interval().orElseThrow());
            default -> null;
        };
        if (trigger == null) {
            return;
        }
        ticker.schedule(task.name(), trigger, tick -> fireTick(task, trigger, tick));
    }

    /**
     * Fires one tick through the scheduler, which claims it and enqueues its message in one step.
     * The scheduler judges by its broker's clock: when it says the tick is not due yet, this
     * process's clock runs ahead, and the tick is tried again once the broker's clock reaches it (by
     * then another client may have fired it, which is fine: each tick fires once). When it says
     * the tick is superseded, the call reached the broker after the next tick was due (it waited
     * through an outage, or this process was paused): the latest tick due by the broker's clock is
     * fired instead, so that a late tick fires once, not once more beside the current one.
     */
    private void fireTick(Task<?, ?> task, Trigger trigger, Instant firstTick) throws InterruptedException {
        Instant tick = firstTick;
        while (true) {
            SubmitOptions options = SubmitOptions.builder().headers(Map.of("tick", tick.toString())).build();
            Message message = messages.ofArgument(task, null, options, null, null);
            TickResult result = scheduler.get().fireTick(task.name(), tick, supersededAt(trigger, tick), message,
                    claimLifetime(trigger, tick));
            switch (result.outcome()) {
                case FIRED -> {
                    LOG.log(Level.DEBUG, "fired {0} tick {1} as {2}", task.name(), tick, message.id());
                    return;
                }
                case ALREADY_FIRED -> {
                    return;
                }
                case SUPERSEDED -> {
                    Instant late = tick;
                    tick = PeriodicScheduler.latestDueTick(trigger, tick, result.brokerTime());
                    LOG.log(Level.DEBUG, "{0} tick {1} reached the broker at {2}, after a later tick was due: firing {3} instead",
                            task.name(), late, result.brokerTime(), tick);
                }
                case NOT_DUE -> {
                    Duration early = Duration.between(result.brokerTime(), tick);
                    if (early.compareTo(CLOCK_SKEW_WARNING) > 0 && !clockSkewWarned) {
                        clockSkewWarned = true;
                        LOG.log(Level.WARNING, "this process''s clock runs about {0} ms ahead of the broker''s:"
                                + " periodic ticks wait for the broker''s clock; synchronise the clocks (NTP)", early.toMillis());
                    }
                    Thread.sleep(early.plusMillis(1));
                }
            }
        }
    }

    /** When the broker refuses {@code tick} as superseded: at the next tick, and not before it is a second late. */
    private static Instant supersededAt(Trigger trigger, Instant tick) {
        Instant next = trigger.nextAfter(tick);
        Instant minimum = tick.plus(MIN_SUPERSEDED_LATENESS);
        return next.isBefore(minimum) ? minimum : next;
    }

    /**
     * How long the broker keeps a tick's claim: several periods, and at least a minute, so that a
     * client a little late never fires a tick again, while a job that is gone leaves nothing behind.
     */
    public static Duration claimLifetime(Trigger trigger, Instant tick) {
        Duration period = Duration.between(tick, trigger.nextAfter(tick));
        Duration several = period.multipliedBy(CLAIM_PERIODS);
        return several.compareTo(MIN_CLAIM_LIFETIME) < 0 ? MIN_CLAIM_LIFETIME : several;
    }

    @Override
    public void close() { ticker.close(); }
}
