package io.binomic.redis.internal;

import java.util.List;

/**
 * The Lua scripts of the Redis broker, each read from its file of this package's resources after
 * the shared {@code lib.lua} ({@link LuaSources}); the file says what the script does and what its
 * KEYS and ARGV are. Each one is a single round trip and runs atomically: that is what makes a
 * retry and the ack of the failed delivery one step, and what lets many workers move due messages
 * without moving one twice. Every script touches the keys of one queue only (one hash tag), so it
 * also runs on Redis Cluster.
 *
 * <p>A unique key is a string holding the id of the job that holds it, with the claim's time-to-live
 * ({@code SET ... PX}); it is given back only by that job (compare and delete, {@code release_unique}
 * in {@code lib.lua}, also used by {@link #SETTLE} and {@link #CANCEL_JOB}).
 *
 * <p>The scripts that put a message back onto its queue (due moves, ticks, replays) derive a priority
 * level's stream ({@link RedisPriorities}) from the queue's stream key, which they are given
 * ({@code level_stream} in {@code lib.lua}): same hash tag, so Cluster accepts them.
 */
final class LuaScripts {
    private LuaScripts() { }

    /** {@code enqueue_tracked.lua}: enqueues a tracked message and creates its record, atomically. */
    static final String ENQUEUE_TRACKED = LuaSources.script("enqueue_tracked.lua");

    /** {@code schedule_tracked.lua}: schedules a tracked message and creates its record, atomically. */
    static final String SCHEDULE_TRACKED = LuaSources.script("schedule_tracked.lua");

    /** {@code start_jobs.lua}: marks jobs started unless their record says they ended or were cancelled. */
    static final String START_JOBS = LuaSources.script("start_jobs.lua");

    /** {@code update_running_job.lua}: applies a job update to a RUNNING job only. */
    static final String UPDATE_RUNNING_JOB = LuaSources.script("update_running_job.lua");

    /** {@code cancel_job.lua}: cancels a job, or asks its running attempt to stop. */
    static final String CANCEL_JOB = LuaSources.script("cancel_job.lua");

    /** {@code requeue_job.lua}: puts a tracked job replayed from the dead-letter queue back to QUEUED. */
    static final String REQUEUE_JOB = LuaSources.script("requeue_job.lua");

    /** {@code admit.lua}: the flow-control decision on deliveries of one queue, each atomic with its effect. */
    static final String ADMIT = LuaSources.script("admit.lua");

    /** {@code settle.lua}: settles deliveries of one queue, each fenced by owner and delivery count. */
    static final String SETTLE = LuaSources.script("settle.lua");

    /** {@code pending_of.lua}: the entries pending under one consumer, with their delivery counts and fields. */
    static final String PENDING_OF = LuaSources.script("pending_of.lua");

    /** {@code trim_acked.lua}: removes acknowledged entries from the front of the stream ({@code XTRIM MINID}). */
    static final String TRIM_ACKED = LuaSources.script("trim_acked.lua");

    /** {@code move_due.lua}: moves due members of the delayed set onto their streams, by Redis' clock. */
    static final String MOVE_DUE = LuaSources.script("move_due.lua");

    /** {@code renew_leases.lua}: resets the idle time of entries still owned by the consumer. */
    static final String RENEW_LEASES = LuaSources.script("renew_leases.lua");

    /** {@code reclaim.lua}: XAUTOCLAIM from a cursor, with each claimed entry's delivery count. */
    static final String RECLAIM = LuaSources.script("reclaim.lua");

    /** {@code claim_tick.lua}: claims a periodic job's tick and enqueues its message in one step. */
    static final String CLAIM_TICK = LuaSources.script("claim_tick.lua");

    /** {@code replay.lua}: moves dead letters back onto their streams with attempt 1. */
    static final String REPLAY = LuaSources.script("replay.lua");

    /** {@code stats.lua}: the counts of one queue. */
    static final String STATS = LuaSources.script("stats.lua");

    /** {@code remove_idle_consumers.lua}: deletes consumers with nothing pending that were idle long enough. */
    static final String REMOVE_IDLE_CONSUMERS = LuaSources.script("remove_idle_consumers.lua");

    /** {@code read_tick.lua}: reads the last fired tick of a periodic job. */
    static final String READ_TICK = LuaSources.script("read_tick.lua");

    /** {@code add_activity.lua}: adds one process's counts to minute buckets of the dashboard's activity. */
    static final String ADD_ACTIVITY = LuaSources.script("add_activity.lua");

    /** {@code read_activity.lua}: reads minute buckets of the dashboard's activity. */
    static final String READ_ACTIVITY = LuaSources.script("read_activity.lua");

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

    /** {@code enqueue_at_level.lua}: enqueues a message of another priority than the default on its level's stream. */
    static final String ENQUEUE_AT_LEVEL = LuaSources.script("enqueue_at_level.lua");

    /** {@code fetch_levels.lua}: one non-blocking read of all the levels of a queue, highest first or by turn. */
    static final String FETCH_LEVELS = LuaSources.script("fetch_levels.lua");

    /** {@code levels.lua}: the levels of a queue in use, optionally repairing the set of levels. */
    static final String LEVELS = LuaSources.script("levels.lua");

    /**
     * Every script, for loading them again on a server that lost its script cache: Redis does not
     * replicate the cache, so a promoted replica starts without any, and a script sent by SHA in a
     * pipeline then fails with NOSCRIPT (Redisson reloads only for scripts it runs on their own).
     */
    static final List<String> ALL = List.of(SETTLE, PENDING_OF, TRIM_ACKED, MOVE_DUE, RENEW_LEASES, RECLAIM,
            CLAIM_TICK, REPLAY, STATS, REMOVE_IDLE_CONSUMERS, ENQUEUE_TRACKED, SCHEDULE_TRACKED, START_JOBS, UPDATE_RUNNING_JOB,
            CANCEL_JOB, REQUEUE_JOB, SUBMIT_UNIQUE, RELEASE_UNIQUE, SUBMIT_DEBOUNCED, RESUME, SET_QUEUE_LIMITS, ADMIT,
            ADD_ACTIVITY, READ_ACTIVITY, READ_TICK, ENQUEUE_AT_LEVEL, FETCH_LEVELS, LEVELS);
}
