package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.RepeatedErrorLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The lease loop of a worker: renews, four times per lease, the leases of every delivery it holds,
 * running or not yet settled. It is a loop of its own because renewals must go on while the
 * fetcher waits on a read and while outcomes are being written: a lapsed lease hands a delivery
 * to another worker.
 */
final class LeaseKeeper implements ControlLoop.Round {
    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());

    private final WorkerContext context;
    private final Duration period;
    private final Map<String, Delivery> held;
    private final Settler settler;
    private final RepeatedErrorLog renewalFailureLog = new RepeatedErrorLog();

    LeaseKeeper(WorkerContext context, Map<String, Delivery> held, Settler settler) {
        this.context = context;
        this.period = context.config().leaseTimeout().dividedBy(4);
        this.held = held;
        this.settler = settler;
    }

    @Override
    public boolean run() throws InterruptedException {
        Thread.sleep(period);
        if (held.isEmpty()) {
            return true;
        }
        long roundEnds = System.nanoTime() + period.toNanos();
        while (true) {
            try {
                context.broker().renewLeases(context.consumerName(), List.copyOf(held.values()));
                settler.brokerAnswered();
                renewalFailureLog.reset();
                return true;
            } catch (RuntimeException e) {
                // Retry soon rather than a whole period later: after an outage, the sooner the
                // leases are renewed, the smaller the chance another worker takes them over.
                // A queue whose key is broken fails every try (four a second) while the others' leases are renewed.
                String error = RepeatedErrorLog.brief(e);
                if (renewalFailureLog.shouldLog(error)) {
                    LOG.log(Level.WARNING, "worker {0}: lease renewal failed: {1}", context.consumerName(), error);
                }
                if (System.nanoTime() - roundEnds >= 0) {
                    return true;
                }
                Thread.sleep(250);
            }
        }
    }
}
