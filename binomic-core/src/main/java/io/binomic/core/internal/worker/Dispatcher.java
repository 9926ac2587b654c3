package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.Capabilities;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs a worker's deliveries, each on a virtual thread of its own, within its slots: it owns the
 * slots, the deliveries running, those handed out beyond the free slots (run as slots free, never
 * at once), those admitted for a start a rate limit reserved (each waits for it on a slot, with its
 * lease renewed) and the parking of deliveries of paused queues. Every path that takes a delivery (fetch,
 * reclaim, recovery of lost reads) ends here, so each is held, run and released the same way. It
 * also listens for cancels of the jobs it may run, one subscription per queue, on the broker's
 * listener threads: a running job asked to cancel is interrupted here, whichever process asked.
 */
final class Dispatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Dispatcher.class.getName());

    private record Running(Delivery delivery, Thread thread) { }

    private final WorkerContext context;
    private final Semaphore slots;
    private final DeliveryProcessor processor;
    private final Settler settler;
    private final FlowGate flow;
    /**
     * Every delivery the worker holds, by {@link Delivery#key()}: the leases it renews. Not only the running ones:
     * a delivery stays held after its handler ends, until its outcome is written.
     */
    private final Map<String, Delivery> held;
    private final TrackedJobs tracked;
    /** Deliveries whose handler is running, by key. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    /** Deliveries a broker handed out beyond the free slots: run as slots free, never at once. */
    private final Deque<Delivery> overflow = new ConcurrentLinkedDeque<>();
    private final List<AutoCloseable> cancelSubscriptions = new CopyOnWriteArrayList<>();
    /** The start a rate limit reserved for a delivery about to be dispatched ({@link System#nanoTime()}), by key. */
    private final Map<String, Long> reservedStarts = new ConcurrentHashMap<>();
    /**
     * Held by the fetcher from a read until the deliveries it handed out are held, and by the search
     * for lost reads while it tells its finds from those: fair, so the search is not kept out by
     * the fetcher's next read.
     */
    private final ReentrantLock intake = new ReentrantLock(true);
    /** Deliveries waiting on a slot for their reserved start, by key. */
    private final Map<String, Thread> waiting = new ConcurrentHashMap<>();
    /**
     * How late a reserved start may still be taken. A delivery that wakes later than this gives its
     * start back (it is put back, due now, and admitted again): a worker that stalled must not start
     * what it held all at once, on top of the starts other workers take on time.
     */
    static final long LATE_START_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    Dispatcher(WorkerContext context, DeliveryProcessor processor, Settler settler, FlowGate flow, Map<String, Delivery> held,
               TrackedJobs tracked) {
        this.context = context;
        this.slots = new Semaphore(context.config().concurrency());
        this.processor = processor;
        this.settler = settler;
        this.flow = flow;
        this.held = held;
        this.tracked = tracked;
    }

    ReentrantLock intake() { return intake; }

    /** The free slots: a delivery is run only with one taken, which it gives back when it ends. */
    Semaphore slots() { return slots; }

    Map<String, Delivery> held() { return held; }

    TrackedJobs tracked() { return tracked; }

    /** Says that {@code d}, about to be dispatched, may start at {@code startNanos} ({@link System#nanoTime()}) and not before. */
    void holdUntil(Delivery d, long startNanos) {
        reservedStarts.put(d.key(), startNanos);
    }

    /** Whether {@code d} waits for a reserved start: it is not running yet, and its job must not say so. */
    boolean hasReservedStart(Delivery d) { return reservedStarts.containsKey(d.key()); }

    /**
     * Runs {@code d} on its own virtual thread, with a slot taken by the caller (at its reserved start
     * if it has one); the slot is released when it ends.
     */
    void dispatch(Delivery d) {
        Long start = reservedStarts.remove(d.key());
        if (start != null) {
            waitThenStart(d, start);
        } else if (!flow.startUnlessPaused(d, this::start)) {
            park(d); // handed out by a reclaim, held since before the pause, or paused since the fetch
            slots.release();
        }
    }

    /**
     * Keeps {@code d} (its slot taken, its lease renewed) until its reserved start, then starts it,
     * unless the queue was paused meanwhile (parked), the worker is stopping (left pending: its admission
     * stands, so the worker that reclaims it runs it without counting it again), or it woke too late
     * (given back).
     */
    private void waitThenStart(Delivery d, long startNanos) {
        held.put(d.key(), d);
        Thread thread = Thread.ofVirtual().name("binomic-wait-" + d.key()).unstarted(() -> {
            try {
                long wait = startNanos - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                if (!context.active().getAsBoolean()) {
                    held.remove(d.key());
                    slots.release();
                } else if (System.nanoTime() - startNanos > LATE_START_NANOS) {
                    giveBack(d);
                    slots.release();
                } else {
                    dispatch(d);
                }
            } catch (InterruptedException e) {
                held.remove(d.key()); // stopping: left pending for reclaim
                slots.release();
            } finally {
                waiting.remove(d.key());
            }
        });
        waiting.put(d.key(), thread);
        thread.start();
    }

    /** Gives back the start reserved for {@code d}: due again now, attempt unchanged; its settlement releases what it holds. */
    private void giveBack(Delivery d) throws InterruptedException {
        LOG.log(Level.DEBUG, "worker {0}: woke too late for the reserved start of {1}; putting it back", context.consumerName(), d.receipt());
        settler.submit(new Settlement.RetryLater(d, d.message().orElseThrow(), context.clock().instant()));
    }

    private void start(Delivery d) {
        held.put(d.key(), d);
        Thread thread = Thread.ofVirtual().name("binomic-run-" + d.key()).unstarted(() -> {
            Outcome outcome = null;
            try {
                try {
                    outcome = processor.process(d);
                } catch (RuntimeException | Error e) {
                    // The processor records every task fault itself; reaching here is a bug. Left
                    // unsettled, the worker would go on as if it were done while the delivery waited out
                    // its lease to run again, its cause nowhere but this log: it is a failed attempt.
                    LOG.log(Level.ERROR, "worker " + context.consumerName() + ": unexpected failure processing " + d.receipt()
                            + "; recording it as a failed attempt", e);
                    outcome = processor.unexpectedFailure(d, e);
                }
                if (outcome instanceof Outcome.Settle(var settlement)) {
                    settler.submit(settlement);
                }
            } catch (InterruptedException e) {
                LOG.log(Level.WARNING, "worker {0}: interrupted before the outcome of {1} was queued; it stays pending for reclaim",
                        context.consumerName(), d.receipt());
                outcome = null;
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "worker " + context.consumerName() + ": unexpected failure queueing the outcome of " + d.receipt()
                        + "; it stays pending for reclaim", e);
                outcome = null;
            } finally {
                running.remove(d.key());
                tracked.forget(d);
                if (!(outcome instanceof Outcome.Settle)) {
                    held.remove(d.key()); // left pending: stop renewing, so reclaim brings it back
                }
                slots.release();
            }
        });
        running.put(d.key(), new Running(d, thread));
        thread.start();
    }

    /**
     * Parks a delivery of a paused queue or task: settled as due when it is resumed, attempt
     * unchanged. Until written, it is held (its lease renewed) like any other.
     */
    void park(Delivery d) {
        // Its start mark from the fetch must not stand in for the start check of a later delivery of the same job.
        tracked.forget(d);
        held.put(d.key(), d);
        try {
            settler.submit(FlowGate.park(d));
        } catch (InterruptedException e) {
            held.remove(d.key()); // stopping: left pending, reclaim brings it back
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code deliveries} on up to {@code free} slots the caller took; the others, handed out
     * beyond the free slots, are held (their leases renewed) until a slot frees. Returns how many
     * slots it used.
     */
    int dispatchOrHold(List<Delivery> deliveries, int free) {
        int used = 0;
        for (Delivery d : deliveries) {
            if (used < free) {
                dispatch(d);
                used++;
            } else {
                hold(d);
            }
        }
        return used;
    }

    /** Holds {@code d} (its lease renewed) until a slot frees: the fetcher runs it before it fetches new ones. */
    void hold(Delivery d) {
        held.put(d.key(), d);
        overflow.addLast(d);
    }

    /** Runs held deliveries, oldest first, on up to {@code free} slots the caller took; returns how many it used. */
    int runOverflow(int free) {
        int started = 0;
        Delivery d;
        while (started < free && (d = overflow.pollFirst()) != null) {
            dispatch(held.getOrDefault(d.key(), d));
            started++;
        }
        return started;
    }

    /**
     * Lets go of the deliveries not started, those waiting for a slot or for their reserved start:
     * they are left pending for reclaim.
     */
    void dropOverflow() {
        overflow.forEach(d -> {
            held.remove(d.key());
            tracked.forget(d);
        });
        overflow.clear();
        waiting.values().forEach(Thread::interrupt);
    }

    /** Listens for cancels of the jobs of {@code queues}, when the worker runs tracked jobs and the broker keeps records. */
    void listenForCancels(List<String> queues) {
        if (!tracked.enabled()) {
            return;
        }
        JobStore store = context.broker().capability(JobStore.class).orElse(null);
        if (store == null) {
            LOG.log(Level.DEBUG, "worker {0}: {1}", context.consumerName(),
                    Capabilities.missing(context.broker(), JobStore.class, "running jobs cannot be cancelled"));
            return;
        }
        for (String queue : queues) {
            try {
                cancelSubscriptions.add(store.subscribeJobEvents(queue, this::onJobEvent));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: cannot listen for job cancels on queue {1}: {2}", context.consumerName(), queue,
                        e.getMessage());
            }
        }
    }

    /** Asks the running delivery of the job a cancel is for, if any, to stop: its handler is interrupted. */
    private void onJobEvent(JobEvent event) {
        if (event.kind() != JobEvent.Kind.CANCEL_REQUESTED) {
            return;
        }
        tracked.requestCancelBeforeRun(event.id()); // before the running ones: see there why
        for (Running r : running.values()) {
            if (r.delivery().message().map(m -> m.id().equals(event.id())).orElse(false)) {
                LOG.log(Level.INFO, "worker {0}: cancelling running job {1} as asked", context.consumerName(), event.id());
                tracked.requestCancel(r.delivery().key());
            }
        }
    }

    /** Stops listening for cancels. */
    @Override
    public void close() {
        for (AutoCloseable subscription : cancelSubscriptions) {
            try {
                subscription.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "worker {0}: closing a job event subscription failed: {1}", context.consumerName(), e.getMessage());
            }
        }
    }

    int runningCount() { return running.size(); }

    void awaitIdle(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while ((!running.isEmpty() || !waiting.isEmpty()) && System.nanoTime() < deadline) {
            ControlLoop.pause(Duration.ofMillis(10));
        }
    }

    void interruptAll() { running.values().forEach(r -> r.thread().interrupt()); }
}
