package io.binomic.core.internal.worker;

import io.binomic.api.BrokerPermissionException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One control loop of a worker on a platform thread of its own, so that handlers keeping the
 * virtual-thread carriers busy (CPU-bound tasks are not time-sliced) cannot starve it. It owns its
 * thread and the time of its last round, from which the worker's health tells a loop that is
 * stuck: any throwable is logged with its stack and the loop goes on after a pause.
 */
final class ControlLoop {
    private static final System.Logger LOG = System.getLogger(ControlLoop.class.getName());
    private static final Duration ERROR_PAUSE = Duration.ofMillis(500);

    /** One round of a control loop; may block and may throw anything. Returns false when the loop is done. */
    interface Round {
        boolean run() throws Exception;
    }

    private final String name;
    private final String consumerName;
    private final Round round;
    private volatile Thread thread;
    private volatile long lastRoundNanos;

    ControlLoop(String name, String consumerName, Round round) {
        this.name = name;
        this.consumerName = consumerName;
        this.round = round;
    }

    void start() {
        lastRoundNanos = System.nanoTime();
        thread = Thread.ofPlatform().daemon().name("binomic-" + name + "-" + consumerName).start(() -> {
            while (true) {
                try {
                    if (!round.run()) {
                        return;
                    }
                    lastRoundNanos = System.nanoTime();
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable e) {
                    lastRoundNanos = System.nanoTime();
                    LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure in the " + name
                            + " loop; it goes on in " + ERROR_PAUSE.toMillis() + " ms", e);
                    if (!pause(ERROR_PAUSE)) {
                        return;
                    }
                }
            }
        });
    }

    /** Why this loop is not running, or null when it is (or is not started): its thread ended. */
    String stopped() {
        Thread t = thread;
        return t != null && !t.isAlive() ? t.getName() + " stopped" : null;
    }

    /** Why this loop counts as stuck, or null when it completed a round within {@code stuckAfterNanos}. */
    String stuck(long now, long stuckAfterNanos) {
        if (thread == null) {
            return null;
        }
        long since = now - lastRoundNanos;
        return since > stuckAfterNanos
                ? "the " + name + " loop has not completed a round for " + TimeUnit.NANOSECONDS.toSeconds(since) + " s"
                : null;
    }

    void interrupt() { thread.interrupt(); }

    boolean isAlive() { return thread.isAlive(); }

    void join(Duration max) {
        try {
            thread.join(max);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The broker's refusal of a call to the worker's user (an ACL rule, {@code NOPERM}) in {@code failure}'s causes, or null.
     * It lasts until an operator grants what is missing: the worker reports it with the grant, and tries again.
     */
    static BrokerPermissionException refusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof BrokerPermissionException refused) {
                return refused;
            }
        }
        return null;
    }

    /**
     * The level of a round's failure: DEBUG when it is the worker stopping (its loops are interrupted,
     * and a broker call under way fails with the interrupt), else WARNING. A clean stop must not read
     * like a broker that failed.
     */
    static Level failureLevel(Throwable failure) {
        if (Thread.currentThread().isInterrupted()) {
            return Level.DEBUG;
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) {
                return Level.DEBUG;
            }
        }
        return Level.WARNING;
    }

    /** Sleeps; false when interrupted (the worker is stopping). */
    static boolean pause(Duration d) {
        try {
            Thread.sleep(d);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
