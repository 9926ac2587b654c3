package io.binomic.redis.internal;

import io.binomic.api.BrokerException;
import io.binomic.api.BrokerPermissionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The queues of a worker's fetch whose own keys fail to read (a key of the wrong type, a Cluster
 * shard down) while the others answer. One fetch reads all of a worker's queues, and a broken queue
 * must neither fail it for the healthy ones (their entries, once read, are pending to the consumer:
 * dropped with the exception they would wait a whole lease and come back as a later attempt) nor be
 * retried on every fetch: it sits out {@link #BACKOFF} after each failure, and is logged when it
 * starts failing, when its error changes, and every {@link #LOG_EVERY} while it lasts. An ACL refusal
 * (NOPERM) is logged here only when the fetch still returns: when it fails the whole fetch, the
 * worker reports it once itself, with its grant ({@link #logRefusals}).
 */
final class QueueFetchFailures {
    private static final System.Logger LOG = System.getLogger(RedisBroker.class.getName());
    static final Duration BACKOFF = Duration.ofMillis(500);
    private static final Duration LOG_EVERY = Duration.ofSeconds(30);

    /** {@code loggedAtNanos} is {@link #UNLOGGED} for a refusal not logged yet. */
    private record Failing(String error, long sinceNanos, long retryAtNanos, long loggedAtNanos) {
        boolean logged() { return loggedAtNanos != UNLOGGED; }
    }

    private static final long UNLOGGED = Long.MIN_VALUE;

    private final Map<String, Failing> failing = new ConcurrentHashMap<>();

    /**
     * The queues to read now: all but those backing off, or all of them when every one is (then the
     * failure reaches the caller, whose own backoff applies).
     */
    List<String> readable(List<String> queues) {
        if (failing.isEmpty()) {
            return queues;
        }
        long now = System.nanoTime();
        List<String> readable = new ArrayList<>(queues.size());
        for (String queue : queues) {
            Failing f = failing.get(queue);
            if (f == null || now - f.retryAtNanos >= 0) {
                readable.add(queue);
            }
        }
        return readable.isEmpty() ? queues : readable;
    }

    /** Reading {@code queue} failed with {@code e}; the other queues' deliveries are kept. */
    void failed(String queue, RuntimeException e) {
        if (cutOffByInterrupt(e)) {
            // The worker's stop interrupts its fetch: that says nothing of the queue, and no retry follows
            LOG.log(System.Logger.Level.DEBUG, "fetching from queue ''{0}'' was cut off by an interrupt (the worker stopping): {1}",
                    queue, e.getMessage());
            return;
        }
        if (refused(e)) {
            long now = System.nanoTime();
            Failing before = failing.get(queue);
            failing.put(queue, new Failing(String.valueOf(e.getMessage()), before == null ? now : before.sinceNanos,
                    now + BACKOFF.toNanos(), before == null ? UNLOGGED : before.loggedAtNanos));
            return;
        }
        failed(queue, String.valueOf(e.getMessage()));
    }

    private static boolean refused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BrokerPermissionException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Logs the refusals not logged yet: called when a fetch returns, so while other queues answer; a
     * fetch that fails reaches the worker, which logs the refusal itself.
     */
    void logRefusals() {
        if (failing.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        failing.forEach((queue, f) -> {
            if (!f.logged() && failing.replace(queue, f, new Failing(f.error, f.sinceNanos, f.retryAtNanos, now))) {
                LOG.log(System.Logger.Level.WARNING, describe(queue, f.error, Duration.ofNanos(now - f.sinceNanos)));
            }
        });
    }

    /** True when {@code e} is the calling thread's interrupt (a stop), not the queue's or the broker's failure. */
    static boolean cutOffByInterrupt(Throwable e) {
        if (Thread.currentThread().isInterrupted()) {
            return true;
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    void failed(String queue, String error) {
        long now = System.nanoTime();
        Failing before = failing.get(queue);
        boolean log = before == null || !before.logged() || !sameError(before.error, error)
                || now - before.loggedAtNanos >= LOG_EVERY.toNanos();
        long since = before == null ? now : before.sinceNanos;
        failing.put(queue, new Failing(error, since, now + BACKOFF.toNanos(), log ? now : before.loggedAtNanos));
        if (log) {
            LOG.log(System.Logger.Level.ERROR, describe(queue, error, Duration.ofNanos(now - since)));
        }
    }

    /** The log line of a queue whose reads fail: the repair of a key of the wrong type only when that is the error. */
    static String describe(String queue, String error, Duration failingFor) {
        String repair = error.contains("WRONGTYPE") ? " A key of the queue ({" + queue + "}:stream, its :stream:levels set"
                + " or a :stream:p<N> level stream) holds something else: check it with TYPE, then delete or rename it." : "";
        String since = failingFor.toMillis() == 0 ? "" : " (for " + failingFor.toMillis() + " ms)";
        return "fetching from queue '" + queue + "' fails" + since + ": " + error
                + ". This queue is tried again every " + BACKOFF.toMillis() + " ms, the worker's other queues read meanwhile."
                + repair + " Entries already read are not lost";
    }

    /** True while reading {@code queue} fails. */
    boolean failing(String queue) { return !failing.isEmpty() && failing.containsKey(queue); }

    /**
     * The same error but for the connection it came on and the command's arguments (Redisson appends
     * both, with buffer ids that differ on every call, and a pool has many connections).
     */
    static boolean sameError(String a, String b) { return withoutChannel(a).equals(withoutChannel(b)); }

    private static String withoutChannel(String error) {
        int channel = error.indexOf("channel: [");
        return channel < 0 ? error : error.substring(0, channel);
    }

    /** Reading {@code queue} worked. */
    void answered(String queue) {
        if (!failing.isEmpty()) {
            Failing f = failing.remove(queue);
            if (f != null && f.logged()) {
                LOG.log(System.Logger.Level.INFO, "fetching from queue ''{0}'' works again after {1} ms", queue,
                        String.valueOf(Duration.ofNanos(System.nanoTime() - f.sinceNanos).toMillis()));
            }
        }
    }

    /** The first of {@code failures}, the others suppressed in it, to throw when no queue answered. */
    static BrokerException first(List<BrokerException> failures) {
        BrokerException first = failures.getFirst();
        failures.subList(1, failures.size()).forEach(first::addSuppressed);
        return first;
    }
}
