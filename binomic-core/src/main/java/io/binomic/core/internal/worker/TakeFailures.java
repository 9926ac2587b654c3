package io.binomic.core.internal.worker;

/**
 * Since when the worker's calls that take work from the broker fail: its fetches, and its reclaims and
 * searches for lost reads, which run on a thread of their own. What the worker's health gives as the
 * start of an outage: the start of the earliest call that failed since one was last answered, whichever
 * call met the outage first (a reclaim waiting on a broker that no longer answers, then failing, keeps
 * that start, though the fetches fail only later).
 */
final class TakeFailures {
    /** Failing calls: since when (System.nanoTime), which failed first, the last error, when the last failure was seen. */
    record Failing(long sinceNanos, String what, String error, long seenNanos) { }

    /** Null while the calls succeed. */
    private volatile Failing failing;

    /** The calls failing now; null while they succeed. */
    Failing failing() { return failing; }

    boolean isFailing() { return failing != null; }

    /** A call begun at {@code callStartedNanos} failed with {@code error}; {@code what} says which ("fetching has failed"). */
    synchronized void failed(long callStartedNanos, String what, String error) {
        Failing before = failing;
        long seen = System.nanoTime();
        // A refusal (NOPERM) and an outage call for different fixes: what is said goes with the last error when either is one.
        String said = before == null || isRefusal(what) || isRefusal(before.what()) ? what : before.what();
        failing = before == null || callStartedNanos - before.sinceNanos() < 0 ? new Failing(callStartedNanos, what, error, seen)
                : new Failing(before.sinceNanos(), said, error, seen);
    }

    private static boolean isRefusal(String what) { return what.startsWith("Redis refuses"); }

    /**
     * The broker answered a call begun at {@code callStartedNanos}: the calls succeed again, unless that call began
     * before the last failure was seen (a reclaim answered just before the outage, returning after a fetch failed).
     * A refusal is ended only by the call Redis refused ({@code byFetch} for a fetch): a reclaim Redis allows says
     * nothing of the fetch it refuses, and ending the refusal there restarted its age at each refused fetch.
     */
    void answered(long callStartedNanos, boolean byFetch) {
        if (failing != null) { // read alone on every fetch round
            clearIfAfter(callStartedNanos, byFetch);
        }
    }

    private synchronized void clearIfAfter(long callStartedNanos, boolean byFetch) {
        Failing before = failing;
        if (before != null && callStartedNanos - before.seenNanos() >= 0 && (byFetch || !isRefusal(before.what()))) {
            failing = null;
        }
    }
}
