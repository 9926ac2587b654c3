package io.binomic.core.internal.worker;

import io.binomic.api.spi.Broker;
import java.time.Duration;
import java.util.List;

/**
 * Tells the fetcher when outcomes are not being written (a settle call hanging, or failing), so it
 * takes no new work meanwhile: work whose outcome is unwritten runs again elsewhere if this JVM
 * dies. While writes fail, it also probes the broker, which nothing else would while fetching is
 * held back, so the settler learns the broker answers and a batch one broken queue refuses is split.
 */
final class StuckOutcomes {
    /** A settle call this slow means outcomes are not being written: stop taking new work until they are. */
    private static final Duration OUTCOMES_STUCK_AFTER = Duration.ofSeconds(1);
    private static final Duration PROBE_EVERY = Duration.ofSeconds(1);

    private final Broker broker;
    private final Settler settler;
    private long nextProbeNanos;
    private int probeTurn;

    StuckOutcomes(WorkerContext context, Settler settler) {
        this.broker = context.broker();
        this.settler = settler;
    }

    /** True while the settle call under way has taken longer than {@link #OUTCOMES_STUCK_AFTER}, or writes are failing. */
    boolean stuck() {
        long now = System.nanoTime();
        long sending = settler.sendingSinceNanos();
        return settler.failingSinceNanos() != 0 || (sending != 0 && now - sending > OUTCOMES_STUCK_AFTER.toNanos());
    }

    /**
     * While outcomes fail to be written, asks the broker something cheap (one queue's stats, a
     * different queue each second): an answer tells the settler the broker is up and refuses that
     * batch (a queue's stream replaced by another type), which it then splits and gives up part by
     * part instead of holding every queue's work until the key is repaired. Nothing else would tell
     * it: the fetch is stopped meanwhile, and the leases held are those of the stuck outcomes.
     */
    void probe(List<String> queues) {
        long now = System.nanoTime();
        if (settler.failingSinceNanos() == 0 || now - nextProbeNanos < 0) {
            return;
        }
        nextProbeNanos = now + PROBE_EVERY.toNanos();
        try {
            broker.stats(queues.get(Math.floorMod(probeTurn++, queues.size())));
            settler.brokerAnswered();
        } catch (RuntimeException e) {
            // that queue is the broken one, or the broker is away: another queue next time
        }
    }
}
