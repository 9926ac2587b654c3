package io.binomic.core.internal.worker;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.locks.LockSupport;

/**
 * The worker's invoker: runs the handler on the calling thread (the delivery's own virtual
 * thread), so a task costs one virtual thread, not two; a shared watchdog thread interrupts it at
 * its deadline (a thread forked per handler, and its scope, were much of the worker's CPU per
 * no-op task).
 *
 * <p>A timed-out handler is interrupted and its outcome is known only once it has returned (it is
 * this thread, so it can never run beside its retry); an interrupt from outside (a cancel, the
 * worker stopping) reaches the handler and surfaces as {@link InterruptedException}. The watchdog
 * and the handler's end race on one state word, so exactly one wins: a handler that returns first
 * is never interrupted, and one the watchdog reached first reports a timeout, with the watchdog's
 * interrupt cleared before the thread goes on to record the outcome. A handler that returns
 * normally has succeeded, whatever an outside interrupt did meanwhile.
 */
final class DirectTaskInvoker implements TaskInvoker {
    private static final Watchdog WATCHDOG = new Watchdog();

    @Override
    public Object invoke(Callable<?> call, Duration timeout) throws TimeoutException, ExecutionException, InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before the handler started");
        }
        Deadline deadline = new Deadline(Thread.currentThread(), System.nanoTime() + saturatedNanos(timeout));
        WATCHDOG.watch(deadline);
        Object result = null;
        Throwable failure = null;
        try {
            result = call.call();
        } catch (Throwable e) {
            failure = e;
        }
        boolean inTime = deadline.endedInTime();
        WATCHDOG.forget(deadline);
        if (!inTime) {
            throw new TimeoutException("task overran its timeout of " + timeout);
        }
        // A thrown InterruptedException is reported like any failure, and an interrupt flag is left
        // as the handler left it: whether a cancel or the worker stopping caused it, or the handler
        // itself (restoring the flag after catching one is common), only the caller knows. Taken
        // for an outside interrupt here, a handler's own left its job pending until its lease lapsed.
        if (failure != null) {
            throw new ExecutionException(failure); // an Error too: the handler's failure, not the worker's
        }
        return result;
    }

    /** A timeout of centuries is "never", not an overflow. */
    private static long saturatedNanos(Duration timeout) {
        return timeout.compareTo(Duration.ofDays(365 * 100)) > 0 ? Duration.ofDays(365 * 100).toNanos() : timeout.toNanos();
    }

    @Override
    public String name() { return "direct"; }

    /** One execution's race between its end and its deadline. */
    static final class Deadline {
        private static final int RUNNING = 0;
        private static final int RETURNED = 1;
        /** The watchdog won and is interrupting the thread. */
        private static final int FIRING = 2;
        /** The watchdog's interrupt has been delivered. */
        private static final int FIRED = 3;
        private static final AtomicIntegerFieldUpdater<Deadline> STATE = AtomicIntegerFieldUpdater.newUpdater(Deadline.class, "state");

        final Thread thread;
        final long atNanos;
        private volatile int state = RUNNING;

        Deadline(Thread thread, long atNanos) {
            this.thread = thread;
            this.atNanos = atNanos;
        }

        /** The watchdog's side of the race. */
        void fire() {
            if (STATE.compareAndSet(this, RUNNING, FIRING)) {
                thread.interrupt();
                state = FIRED;
            }
        }

        /** True when the handler ended first; false when the watchdog fired (its interrupt then cleared). */
        boolean endedInTime() {
            if (STATE.compareAndSet(this, RUNNING, RETURNED)) {
                return true;
            }
            while (state != FIRED) {
                Thread.onSpinWait(); // the watchdog is between its CAS and its interrupt: a few instructions
            }
            Thread.interrupted();
            return false;
        }
    }

    /**
     * One daemon platform thread for the JVM. Not a {@code ScheduledThreadPoolExecutor}: its one
     * lock, taken twice per task by a thousand virtual threads, convoyed on a loaded machine (the
     * drain ran slower than with a forked thread per task). Here a task's cost is two lock-free
     * set operations; the watchdog wakes at the earliest deadline (at most every
     * {@value #RESOLUTION_NANOS} ns) and scans what is watched, which is at most the running tasks.
     */
    static final class Watchdog implements Runnable {
        private static final long RESOLUTION_NANOS = 1_000_000;
        /** Written while the watchdog scans: any deadline watched meanwhile wakes it again. */
        private static final long SCANNING = Long.MAX_VALUE / 2;
        private final Set<Deadline> watched = ConcurrentHashMap.newKeySet();
        /** When the watchdog will look next (System.nanoTime), or far ahead while it scans or nothing is watched. */
        private volatile long nextLookNanos = SCANNING;
        private volatile Thread thread;

        void watch(Deadline deadline) {
            watched.add(deadline);
            Thread watchdog = thread;
            if (watchdog == null) {
                watchdog = start();
            }
            long nextLook = nextLookNanos;
            if (nextLook == SCANNING || deadline.atNanos - nextLook < 0) {
                LockSupport.unpark(watchdog);
            }
        }

        void forget(Deadline deadline) { watched.remove(deadline); }

        private synchronized Thread start() {
            if (thread == null) {
                thread = Thread.ofPlatform().daemon().name("binomic-task-watchdog").start(this);
            }
            return thread;
        }

        @Override
        public void run() {
            while (true) {
                nextLookNanos = SCANNING;
                long now = System.nanoTime();
                boolean any = false;
                long earliest = 0;
                for (Deadline deadline : watched) {
                    if (deadline.atNanos - now <= 0) {
                        watched.remove(deadline);
                        deadline.fire();
                    } else if (!any || deadline.atNanos - earliest < 0) {
                        any = true;
                        earliest = deadline.atNanos;
                    }
                }
                if (any) {
                    long look = now + Math.max(earliest - now, RESOLUTION_NANOS);
                    nextLookNanos = look;
                    LockSupport.parkNanos(this, look - now);
                } else {
                    LockSupport.park(this); // nextLookNanos stays SCANNING: the next deadline watched wakes it
                }
                Thread.interrupted(); // nothing interrupts the watchdog on purpose; a stray interrupt must not spin it
            }
        }
    }
}
