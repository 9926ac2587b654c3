package io.binomic.redis.internal;

import java.util.List;

/**
 * The Lua scripts of the Redis broker, each read from its file of this package's resources after
 * the shared {@code lib.lua} ({@link LuaSources}); the file says what the script does and what its
 * KEYS and ARGV are. Each one is a single round trip and runs atomically: that is what makes a
 * retry and the ack of the failed delivery one step, and what lets many workers move due messages
 * without moving one twice. Every script touches the keys of one queue only (one hash tag), so it
 * also runs on Redis Cluster; but for the batches and workflows of a single node ({@link RedisBatches},
 * {@link RedisWorkflows}): a Cluster's use scripts of one slot each ({@link ClusterBatches},
 * {@link ClusterWorkflows}).
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

    static final String ENQUEUE_TRACKED = LuaSources.script("enqueue_tracked.lua");
    static final String SCHEDULE_TRACKED = LuaSources.script("schedule_tracked.lua");
    static final String START_JOBS = LuaSources.script("start_jobs.lua");
    static final String UPDATE_RUNNING_JOB = LuaSources.script("update_running_job.lua");
    static final String CANCEL_JOB = LuaSources.script("cancel_job.lua");
    static final String REQUEUE_JOB = LuaSources.script("requeue_job.lua");
    static final String ADMIT = LuaSources.script("admit.lua");
    static final String SETTLE = LuaSources.script("settle.lua");
    static final String PENDING_OF = LuaSources.script("pending_of.lua");
    static final String TRIM_ACKED = LuaSources.script("trim_acked.lua");
    static final String MOVE_DUE = LuaSources.script("move_due.lua");
    static final String RENEW_LEASES = LuaSources.script("renew_leases.lua");
    static final String RECLAIM = LuaSources.script("reclaim.lua");
    static final String CLAIM_TICK = LuaSources.script("claim_tick.lua");
    static final String REPLAY = LuaSources.script("replay.lua");
    static final String STATS = LuaSources.script("stats.lua");
    static final String REMOVE_IDLE_CONSUMERS = LuaSources.script("remove_idle_consumers.lua");
    static final String REMOVE_CONSUMER = LuaSources.script("remove_consumer.lua");
    static final String GROUP_EXISTS = LuaSources.script("group_exists.lua");
    static final String COUNT_PARKED = LuaSources.script("count_parked.lua");
    static final String READ_TICK = LuaSources.script("read_tick.lua");
    static final String ADD_ACTIVITY = LuaSources.script("add_activity.lua");
    static final String READ_ACTIVITY = LuaSources.script("read_activity.lua");
    static final String SUBMIT_UNIQUE = LuaSources.script("submit_unique.lua");
    static final String ENQUEUE_UNIQUE = LuaSources.script("enqueue_unique.lua");
    static final String RELEASE_UNIQUE = LuaSources.script("release_unique.lua");
    static final String SUBMIT_DEBOUNCED = LuaSources.script("submit_debounced.lua");
    static final String RESUME = LuaSources.script("resume.lua");
    static final String SET_QUEUE_LIMITS = LuaSources.script("set_queue_limits.lua");
    static final String RESPACE_RATE_LIMITED = LuaSources.script("respace_rate_limited.lua");
    static final String ENQUEUE_AT_LEVEL = LuaSources.script("enqueue_at_level.lua");
    static final String ENQUEUE_ALL = LuaSources.script("enqueue_all.lua");
    static final String FETCH_LEVELS = LuaSources.script("fetch_levels.lua");
    static final String LEVELS = LuaSources.script("levels.lua");
    static final String GIVE_BACK = LuaSources.script("give_back.lua");
    static final String SUBMIT_BATCH = LuaSources.script("submit_batch.lua");
    static final String CLOSE_BATCH = LuaSources.script("close_batch.lua");
    static final String SUBMIT_BATCH_CLUSTER = LuaSources.script("submit_batch_cluster.lua");
    static final String BATCH_APPLY = LuaSources.script("batch_apply.lua");
    static final String BATCH_DELIVER = LuaSources.script("batch_deliver.lua");
    static final String UNDUE = LuaSources.script("undue.lua");
    static final String MARK_CANCEL_REQUESTED = LuaSources.script("mark_cancel_requested.lua");
    static final String SUBMIT_WORKFLOW = LuaSources.script("submit_workflow.lua");
    static final String CANCEL_WORKFLOW = LuaSources.script("cancel_workflow.lua");
    static final String SUBMIT_WORKFLOW_CLUSTER = LuaSources.script("submit_workflow_cluster.lua");
    static final String WF_APPLY = LuaSources.script("wf_apply.lua");
    static final String WF_DELIVER = LuaSources.script("wf_deliver.lua");

    /**
     * Every script, for loading them again on a server that lost its script cache: Redis does not
     * replicate the cache, so a promoted replica starts without any, and a script sent by SHA in a
     * pipeline then fails with NOSCRIPT (Redisson reloads only for scripts it runs on their own).
     */
    static final List<String> ALL = List.of(SETTLE, PENDING_OF, TRIM_ACKED, MOVE_DUE, RENEW_LEASES, RECLAIM,
            CLAIM_TICK, REPLAY, STATS, REMOVE_IDLE_CONSUMERS, ENQUEUE_TRACKED, SCHEDULE_TRACKED, START_JOBS, UPDATE_RUNNING_JOB,
            CANCEL_JOB, REQUEUE_JOB, SUBMIT_UNIQUE, ENQUEUE_UNIQUE, RELEASE_UNIQUE, SUBMIT_DEBOUNCED, RESUME, SET_QUEUE_LIMITS, RESPACE_RATE_LIMITED, ADMIT,
            ADD_ACTIVITY, READ_ACTIVITY, READ_TICK, ENQUEUE_AT_LEVEL, ENQUEUE_ALL, FETCH_LEVELS, LEVELS, GIVE_BACK,
            SUBMIT_BATCH, CLOSE_BATCH, SUBMIT_BATCH_CLUSTER, BATCH_APPLY, BATCH_DELIVER, UNDUE, MARK_CANCEL_REQUESTED,
            SUBMIT_WORKFLOW, CANCEL_WORKFLOW, SUBMIT_WORKFLOW_CLUSTER, WF_APPLY, WF_DELIVER, REMOVE_CONSUMER, GROUP_EXISTS,
            COUNT_PARKED);
}
