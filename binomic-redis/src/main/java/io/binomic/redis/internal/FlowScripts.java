package io.binomic.redis.internal;

import java.util.List;

/**
 * The Lua scripts of unique jobs, debounce, pause and queue limits ({@link LuaSources}): one script
 * per decision, touching the keys of one queue (one hash tag) only, so they run on Redis Cluster.
 * A unique key is a string holding the id of the job that holds it, with the claim's time-to-live
 * ({@code SET ... PX}); it is given back only by that job (compare and delete, {@code release_unique}
 * in {@code lib.lua}, also used by {@link LuaScripts#SETTLE} and {@link LuaScripts#CANCEL_JOB}).
 */
final class FlowScripts {
    private FlowScripts() { }

    /** {@code submit_unique.lua}: stores a unique message unless its key is held, and takes the key, atomically. */
    static final String SUBMIT_UNIQUE = LuaSources.script("submit_unique.lua");

    /** {@code release_unique.lua}: gives back unique keys at start. */
    static final String RELEASE_UNIQUE = LuaSources.script("release_unique.lua");

    /** {@code submit_debounced.lua}: schedules a debounced message, or replaces the one with its key still waiting. */
    static final String SUBMIT_DEBOUNCED = LuaSources.script("submit_debounced.lua");

    /** {@code resume.lua}: resumes a queue or a task, making due the parked messages nothing paused holds. */
    static final String RESUME = LuaSources.script("resume.lua");

    /** {@code set_queue_limits.lua}: replaces a queue's limits and releases what the old ones held back. */
    static final String SET_QUEUE_LIMITS = LuaSources.script("set_queue_limits.lua");

    /** Every script of this class, for {@link LuaScripts#ALL}'s reload after NOSCRIPT. */
    static final List<String> ALL = List.of(SUBMIT_UNIQUE, RELEASE_UNIQUE, SUBMIT_DEBOUNCED, RESUME);
}
