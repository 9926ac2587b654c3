package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.core.internal.RepeatedErrorLog;
import java.lang.System.Logger.Level;

/**
 * The lease loop of a worker: renews, four times per lease, the leases of every delivery it holds,
 * running or not yet settled. It is a loop of its own because renewals must go on while the
 * fetcher waits on a read and while outcomes are being written: a lapsed lease hands a delivery
 * to another worker.
 */
final class LeaseKeeper {
    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());

    private final WorkerConfig config;
    private final String consumerName;
    private final Broker broker;
    private final HeldDeliveries held;
    private final Settler settler;
    private final RepeatedErrorLog renewalFailureLog = new RepeatedErrorLog();
    private final ControlLoop loop;

    LeaseKeeper(WorkerContext context, HeldDeliveries held, Settler settler) {
        this.config = context.config();
        this.consumerName = context.consumerName();
        this.broker = context.broker();
        this.held = held;
        this.settler = settler;
        this.loop = new ControlLoop("lease", consumerName, this::leaseRound);
    }

    ControlLoop loop() {
        return loop;
    }

    private boolean leaseRound() throws InterruptedException {
        Thread.sleep(config.leaseTimeout().dividedBy(4));
        if (held.isEmpty()) {
            return true;
        }
        long roundEnds = System.nanoTime() + config.leaseTimeout().dividedBy(4).toNanos();
        while (true) {
            try {
                broker.renewLeases(consumerName, held.snapshot());
                settler.brokerAnswered();
                renewalFailureLog.reset();
                return true;
            } catch (RuntimeException e) {
                // Retry soon rather than a whole period later: after an outage, the sooner the
                // leases are renewed, the smaller the chance another worker takes them over.
                // A queue whose key is broken fails every try (four a second) while the others' leases are renewed.
                String error = RepeatedErrorLog.brief(e);
                if (renewalFailureLog.shouldLog(error)) {
                    LOG.log(Level.WARNING, "worker {0}: lease renewal failed: {1}", consumerName, error);
                }
                if (System.nanoTime() - roundEnds >= 0) {
                    return true;
                }
                Thread.sleep(250);
            }
        }
    }
}
