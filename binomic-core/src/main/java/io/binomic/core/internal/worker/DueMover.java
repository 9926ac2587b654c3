package io.binomic.core.internal.worker;

import io.binomic.api.spi.Scheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The mover loop of a worker: puts due delayed messages (DELAY submissions, retry backoffs) of its
 * queues on those queues, and sleeps until the next is due (a quarter second at most). A loop of its
 * own, so that delayed work comes due on time whatever the fetcher waits for.
 */
final class DueMover implements ControlLoop.Round {
    private static final System.Logger LOG = System.getLogger(DueMover.class.getName());
    private static final int MOVE_BATCH = 1000;
    private static final Duration MOVER_MAX_SLEEP = Duration.ofMillis(250);
    private static final Duration BROKER_ERROR_PAUSE = Duration.ofMillis(500);

    private final WorkerContext context;
    private final Scheduler scheduler;
    private final WorkerQueues queues;

    DueMover(WorkerContext context, Scheduler scheduler, WorkerQueues queues) {
        this.context = context;
        this.scheduler = scheduler;
        this.queues = queues;
    }

    @Override
    public boolean run() throws InterruptedException {
        if (!context.active().getAsBoolean()) {
            return false;
        }
        Instant now = context.clock().instant();
        Duration sleep = MOVER_MAX_SLEEP;
        try {
            for (String queue : queues.all()) {
                while (scheduler.moveDue(queue, now, MOVE_BATCH) == MOVE_BATCH) {
                    // A full batch means more may be due: keep moving before sleeping.
                }
                Optional<Instant> next = scheduler.nextDue(queue);
                if (next.isPresent()) {
                    Duration until = Duration.between(context.clock().instant(), next.get());
                    if (until.compareTo(sleep) < 0) {
                        sleep = until.isNegative() ? Duration.ZERO : until;
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.log(ControlLoop.failureLevel(e), "worker {0}: moving due messages failed: {1}", context.consumerName(), e.getMessage());
            sleep = BROKER_ERROR_PAUSE;
        }
        Thread.sleep(sleep);
        return true;
    }
}
