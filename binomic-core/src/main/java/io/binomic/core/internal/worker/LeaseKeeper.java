package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.RepeatedErrorLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;

/**
 * The lease loop of a worker: renews, four times per lease, the leases of every delivery it holds,
 * running or not yet settled. It is a loop of its own because renewals must go on while the
 * fetcher waits on a read and while outcomes are being written: a lapsed lease hands a delivery
 * to another worker. Each renewal also says which deliveries another worker took over meanwhile
 * (this JVM was paused, or renewals could not reach the broker for longer than the lease): those
 * are handed to {@code onLost}, which stops running them, so the two runs overlap for at most one
 * renewal period once the broker answers again.
 */
final class LeaseKeeper implements ControlLoop.Round {
    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());

    private final WorkerContext context;
    private final Duration period;
    private final Map<String, Delivery> held;
    private final Settler settler;
    /** Stops what it can of the deliveries a renewal reported lost; returns how many it stopped. */
    private final ToIntFunction<List<Delivery>> onLost;
    private final RepeatedErrorLog renewalFailureLog = new RepeatedErrorLog();
    /** When the last renewal that reached the broker began, or when there was nothing to renew: the leases held date from then. */
    private long renewedSinceNanos = System.nanoTime();
    /** Whether the leases held are past their term without a renewal, and that was logged. */
    private boolean overdue;

    LeaseKeeper(WorkerContext context, Map<String, Delivery> held, Settler settler, ToIntFunction<List<Delivery>> onLost) {
        this.context = context;
        this.period = context.config().leaseTimeout().dividedBy(4);
        this.held = held;
        this.settler = settler;
        this.onLost = onLost;
    }

    @Override
    public boolean run() throws InterruptedException {
        Thread.sleep(period);
        if (held.isEmpty()) {
            renewedSinceNanos = System.nanoTime();
            overdue = false;
            return true;
        }
        long roundEnds = System.nanoTime() + period.toNanos();
        while (true) {
            long began = System.nanoTime();
            try {
                List<Delivery> lost = context.broker().renewLeasesReportingLost(context.consumerName(), List.copyOf(held.values()));
                renewed(began, lost.isEmpty() ? 0 : onLost.applyAsInt(lost));
                return true;
            } catch (RuntimeException e) {
                // Retry soon rather than a whole period later: after an outage, the sooner the
                // leases are renewed, the smaller the chance another worker takes them over.
                // A queue whose key is broken fails every try (four a second) while the others' leases are renewed.
                String error = RepeatedErrorLog.brief(e);
                if (renewalFailureLog.shouldLog(error)) {
                    LOG.log(Level.WARNING, "worker {0}: lease renewal failed: {1}", context.consumerName(), error);
                }
                warnIfOverdue();
                if (System.nanoTime() - roundEnds >= 0) {
                    return true;
                }
                Thread.sleep(250);
            }
        }
    }

    /**
     * Notes a renewal that reached the broker. One that came more than a lease after the last (the
     * calls failed, or one hung on a stalled connection) is logged: other workers may have reclaimed
     * what this one held meanwhile; {@code stopped} of its runs were found taken over and stopped.
     */
    private void renewed(long began, int stopped) {
        settler.brokerAnswered(began);
        renewalFailureLog.reset();
        long gap = System.nanoTime() - renewedSinceNanos;
        if (overdue || gap > context.config().leaseTimeout().toNanos()) {
            LOG.log(Level.WARNING, "worker {0}: leases renewed after {1} ms without a renewal, longer than the lease ({2} ms); "
                    + "stopped {3} of its runs that another worker took over meanwhile", context.consumerName(),
                    TimeUnit.NANOSECONDS.toMillis(gap), context.config().leaseTimeout().toMillis(), stopped);
            overdue = false;
        }
        renewedSinceNanos = began;
    }

    /**
     * Says once per outage that the leases held outlived their term unrenewed: from then another
     * worker may reclaim and run what this one still runs, until a renewal reaches the broker and
     * the deliveries taken over are stopped here.
     */
    private void warnIfOverdue() {
        long since = System.nanoTime() - renewedSinceNanos;
        if (!overdue && since > context.config().leaseTimeout().toNanos() && !held.isEmpty()) {
            overdue = true;
            LOG.log(Level.WARNING, "worker {0}: the leases of its {1} deliveries were not renewed for {2} ms, longer than the lease "
                    + "({3} ms): another worker may take them over and run them too; this worker stops those it finds taken "
                    + "over once a renewal reaches the broker", context.consumerName(), held.size(),
                    TimeUnit.NANOSECONDS.toMillis(since), context.config().leaseTimeout().toMillis());
        }
    }
}
