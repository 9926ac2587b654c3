package io.binomic.core.internal;

import java.time.Duration;

/**
 * Whether to log a failure that repeats: when its error changes, and every {@link #EVERY} while it
 * lasts. A control loop retrying a broken queue's key fails several times a second with the same
 * error; logged each time it buried everything else. Used by one thread per instance.
 */
public final class RepeatedErrorLog {
    static final Duration EVERY = Duration.ofSeconds(30);

    private String last = "";
    private long loggedAtNanos;

    /** True when {@code error} (as {@link #brief} gives it) should be logged now. */
    public boolean shouldLog(String error) {
        long now = System.nanoTime();
        if (error.equals(last) && now - loggedAtNanos < EVERY.toNanos()) {
            return false;
        }
        last = error;
        loggedAtNanos = now;
        return true;
    }

    /** The failure ended: the next one is logged at once. */
    public void reset() { last = ""; }

    /**
     * A broker error without what Redisson appends after it: the connection, with ids that differ
     * on every call, and the command's arguments (a script's whole Lua source).
     */
    public static String brief(Throwable e) {
        String error = String.valueOf(e.getMessage());
        int channel = error.indexOf("channel: [");
        return channel < 0 ? error : error.substring(0, channel).strip();
    }
}
