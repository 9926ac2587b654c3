package io.binomic.redis.internal;

import io.binomic.api.BrokerOutOfMemoryException;
import org.redisson.client.RedisOutOfMemoryException;

/**
 * Redis' {@code OOM command not allowed when used memory > 'maxmemory'} reply, as one line that
 * names the server, {@code maxmemory} and what became of the write. Redisson's own message of it
 * carries the command's arguments (a script's whole Lua source) and the connection's buffers, which
 * tell an operator nothing. A script refused so wrote nothing: Redis refuses its first write, and
 * only a script that wrote already may go on writing.
 */
final class OutOfMemoryReplies {
    private static final String REPLY = "OOM command not allowed";

    private OutOfMemoryReplies() { }

    /** True when {@code failure} is Redis refusing a write because {@code maxmemory} is reached. */
    static boolean isOutOfMemory(Throwable failure) {
        for (Throwable c = failure; c != null; c = c.getCause()) {
            if (c instanceof RedisOutOfMemoryException || String.valueOf(c.getMessage()).contains(REPLY)) {
                return true;
            }
        }
        return false;
    }

    /** The exception of an {@link #isOutOfMemory} failure of {@code what} at {@code target}. */
    static BrokerOutOfMemoryException failure(String target, String what, Throwable cause) {
        return new BrokerOutOfMemoryException("Redis at " + target + " is out of memory (maxmemory reached, OOM): " + what
                + " was refused; " + consequence(what) + "; raise maxmemory or free memory", cause);
    }

    private static String consequence(String what) {
        if (what.startsWith("enqueueAll")) {
            return "the jobs of the refused part of the batch were not enqueued (earlier parts may have been)";
        }
        if (what.startsWith("enqueue ") || what.startsWith("schedule") || what.startsWith("unique submit")
                || what.startsWith("debounced submit")) {
            return "the job was not enqueued";
        }
        if (what.startsWith("settle ")) {
            return "the worker keeps these outcomes and sends them again until Redis takes them";
        }
        if (what.startsWith("moveDue ")) {
            return "the due messages stay in the delayed set and are moved at the next try";
        }
        if (what.startsWith("fireTick ")) {
            return "this tick did not fire; the next one fires on schedule";
        }
        return "nothing of it was written";
    }
}
