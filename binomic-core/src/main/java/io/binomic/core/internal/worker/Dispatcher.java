package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Deque;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;

/**
 * Runs a worker's deliveries, each on a virtual thread of its own, within its slots: it owns the
 * slots, the deliveries running, those handed out beyond the free slots (run as slots free, never
 * at once) and the parking of deliveries of paused queues. Every path that takes a delivery (fetch,
 * reclaim, recovery of lost reads) ends here, so each is held, run and released the same way.
 */
final class Dispatcher {
    private static final System.Logger LOG = System.getLogger(Dispatcher.class.getName());

    private record Running(Delivery delivery, Thread thread) { }

    private final String consumerName;
    private final Semaphore slots;
    private final DeliveryProcessor processor;
    private final Settler settler;
    private final FlowGate flow;
    private final HeldDeliveries held;
    private final TrackedJobs tracked;
    /** Deliveries whose handler is running, by receipt. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    /** Deliveries a broker handed out beyond the free slots: run as slots free, never at once. */
    private final Deque<Delivery> overflow = new ConcurrentLinkedDeque<>();

    Dispatcher(WorkerContext context, DeliveryProcessor processor, Settler settler, FlowGate flow, HeldDeliveries held,
               TrackedJobs tracked) {
        this.consumerName = context.consumerName();
        this.slots = new Semaphore(context.config().concurrency());
        this.processor = processor;
        this.settler = settler;
        this.flow = flow;
        this.held = held;
        this.tracked = tracked;
    }

    /** The free slots: a delivery is run only with one taken, which it gives back when it ends. */
    Semaphore slots() {
        return slots;
    }

    HeldDeliveries held() {
        return held;
    }

    TrackedJobs tracked() {
        return tracked;
    }

    /** Runs {@code d} on its own virtual thread, with a slot taken by the caller; the slot is released when it ends. */
    void dispatch(Delivery d) {
        if (!flow.startUnlessPaused(d, this::start)) {
            park(d); // handed out by a reclaim, held since before the pause, or paused since the fetch
            slots.release();
        }
    }

    private void start(Delivery d) {
        held.put(d);
        Thread thread = Thread.ofVirtual().name("binomic-run-" + d.receipt()).unstarted(() -> {
            Outcome outcome = null;
            try {
                try {
                    outcome = processor.process(d);
                } catch (RuntimeException | Error e) {
                    // The processor records every task fault itself; reaching here is a bug. Left
                    // unsettled, the worker would go on as if it were done while the delivery waited out
                    // its lease to run again, its cause nowhere but this log: it is a failed attempt.
                    LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure processing " + d.receipt()
                            + "; recording it as a failed attempt", e);
                    outcome = processor.unexpectedFailure(d, e);
                }
                if (outcome instanceof Outcome.Settle(var settlement)) {
                    settler.submit(settlement);
                }
            } catch (InterruptedException e) {
                LOG.log(Level.WARNING, "worker {0}: interrupted before the outcome of {1} was queued; it stays pending for reclaim",
                        consumerName, d.receipt());
                outcome = null;
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure queueing the outcome of " + d.receipt()
                        + "; it stays pending for reclaim", e);
                outcome = null;
            } finally {
                running.remove(d.receipt());
                tracked.forget(d);
                if (!(outcome instanceof Outcome.Settle)) {
                    held.remove(d.receipt()); // left pending: stop renewing, so reclaim brings it back
                }
                slots.release();
            }
        });
        running.put(d.receipt(), new Running(d, thread));
        thread.start();
    }

    /**
     * Parks a delivery of a paused queue or task: settled as due when it is resumed, attempt
     * unchanged. Until written, it is held (its lease renewed) like any other.
     */
    void park(Delivery d) {
        held.put(d);
        try {
            settler.submit(FlowGate.park(d));
        } catch (InterruptedException e) {
            held.remove(d.receipt()); // stopping: left pending, reclaim brings it back
            Thread.currentThread().interrupt();
        }
    }

    /** A delivery handed out beyond the free slots: held (its lease renewed) until a slot frees. */
    void hold(Delivery d) {
        held.put(d);
        overflow.addLast(d);
    }

    /** Runs held deliveries, oldest first, on up to {@code free} slots the caller took; returns how many it used. */
    int runOverflow(int free) {
        int started = 0;
        Delivery d;
        while (started < free && (d = overflow.pollFirst()) != null) {
            dispatch(held.currentOf(d));
            started++;
        }
        return started;
    }

    /** Lets go of the deliveries waiting for a slot: never started, they are left pending for reclaim. */
    void dropOverflow() {
        overflow.forEach(d -> held.remove(d.receipt()));
        overflow.clear();
    }

    /** Asks the running delivery of job {@code id}, if any, to stop: its handler is interrupted. */
    void cancelJob(UUID id) {
        for (Running r : running.values()) {
            if (r.delivery().message().map(m -> m.id().equals(id)).orElse(false)) {
                LOG.log(Level.INFO, "worker {0}: cancelling running job {1} as asked", consumerName, id);
                tracked.requestCancel(r.delivery().receipt());
            }
        }
    }

    int runningCount() {
        return running.size();
    }

    void awaitIdle(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (!running.isEmpty() && System.nanoTime() < deadline) {
            ControlLoop.pause(Duration.ofMillis(10));
        }
    }

    void interruptAll() {
        running.values().forEach(r -> r.thread().interrupt());
    }
}
