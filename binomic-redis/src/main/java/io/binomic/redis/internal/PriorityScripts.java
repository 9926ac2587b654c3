package io.binomic.redis.internal;

import java.util.List;

/**
 * The Lua of priorities ({@link LuaSources}). A queue's messages of the default priority stay on
 * its stream ({@code binomic:{q}:stream}); each other level used has a stream of its own,
 * {@code binomic:{q}:stream:p<level>}, read through the same group, and the levels in use are the
 * members of the set {@code binomic:{q}:stream:levels}. All share the queue's hash tag: one Cluster
 * slot. The scripts that put a message back onto its queue (due moves, ticks, replays) derive the
 * level's keys from the queue's stream key, which they are given ({@code level_stream} in
 * {@code lib.lua}): same slot, so Cluster accepts them.
 */
final class PriorityScripts {
    private PriorityScripts() { }

    /** {@code enqueue_at_level.lua}: enqueues a message of another priority than the default on its level's stream. */
    static final String ENQUEUE = LuaSources.script("enqueue_at_level.lua");

    /** {@code fetch_levels.lua}: one non-blocking read of all the levels of a queue, highest first or by turn. */
    static final String FETCH = LuaSources.script("fetch_levels.lua");

    /** {@code levels.lua}: the levels of a queue in use, optionally repairing the set of levels. */
    static final String LEVELS = LuaSources.script("levels.lua");

    /** Every script of this class, for loading them again after NOSCRIPT. */
    static final List<String> ALL = List.of(ENQUEUE, FETCH, LEVELS);
}
