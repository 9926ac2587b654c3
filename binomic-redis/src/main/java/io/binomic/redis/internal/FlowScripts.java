package io.binomic.redis.internal;

/**
 * The Lua scripts of unique jobs, debounce and pause: one script per decision, touching the keys of
 * one queue (one hash tag) only, so they run on Redis Cluster. A unique key is a string holding
 * the id of the job that holds it, with the claim's time-to-live ({@code SET ... PX}); it is given
 * back only by that job (compare and delete).
 */
final class FlowScripts {
    private FlowScripts() { }

    /**
     * Gives back unique keys, each only if it still holds the given job id. Spliced into
     * {@link LuaScripts#SETTLE} (marker {@code 'U', index of the key in KEYS, job id} after a
     * settlement, applied with an ack or a dead letter only when the settlement is) and
     * {@link LuaScripts#CANCEL_JOB} (a cancelled job gives back the key its record names in
     * {@code uniqueKey}: a key of the same queue, so of the same slot).
     */
    static final String UNIQUE_FUNCTIONS = """
            local function release_unique(key, id)
              if redis.call('GET', key) == id then redis.call('DEL', key) end
            end
            local function release_unique_of_job(job)
              local key = redis.call('HGET', job, 'uniqueKey')
              if key then release_unique(key, string.sub(job, -36)) end
            end
            """;

    /**
     * Stores a unique message unless its key is held, and takes the key, atomically.
     * KEYS: unique key, stream (enqueue) or delayed set (schedule), job record.
     * ARGV: job id, ttl ms, 'E' | 'S', due ms, delayed member, tracked '1' | '0', task, enqueuedAt ms,
     * retention ms, record the key in the job record '1' | '0', stream fields...
     * Returns the id of the job holding the key (ARGV[1] when stored).
     */
    static final String SUBMIT_UNIQUE = PriorityScripts.LEVEL_FUNCTIONS + """
            local held = redis.call('GET', KEYS[1])
            if held then return held end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            if ARGV[3] == 'E' then
              local stream = KEYS[2]
              for i = 11, #ARGV - 1, 2 do if ARGV[i] == 'priority' then stream = level_stream(KEYS[2], ARGV[i + 1]) end end
              redis.call('XADD', stream, '*', unpack(ARGV, 11))
            else
              redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
            end
            if ARGV[6] == '1' then
              redis.call('DEL', KEYS[3])
              redis.call('HSET', KEYS[3], 'state', ARGV[3] == 'E' and 'QUEUED' or 'SCHEDULED', 'task', ARGV[7],
                'enqueuedAt', ARGV[8], 'retention', ARGV[9])
              if ARGV[3] == 'S' then redis.call('HSET', KEYS[3], 'due', ARGV[4]) end
              if ARGV[10] == '1' then redis.call('HSET', KEYS[3], 'uniqueKey', KEYS[1]) end
            end
            return ARGV[1]
            """;

    /** Gives back unique keys at start. KEYS: unique keys of one queue. ARGV: the job id of each. */
    static final String RELEASE_UNIQUE = UNIQUE_FUNCTIONS + """
            for k = 1, #KEYS do release_unique(KEYS[k], ARGV[k]) end
            return #KEYS
            """;

    /**
     * Schedules a debounced message, or replaces the one with its key still waiting in the delayed
     * set (its member is what the debounce key holds): the waiting job takes the new member's fields
     * and due time and keeps its id (and record, whose due time is updated). A job no longer in the
     * delayed set (due, running, ended) is not replaced: a new one is scheduled.
     * KEYS: debounce key, delayed set, job record of the new message.
     * ARGV: new id, due ms, new member, key ttl ms, tracked '1' | '0', task, enqueuedAt ms, retention ms,
     * prefix of job record keys. Returns the id of the job scheduled or replaced.
     */
    static final String SUBMIT_DEBOUNCED = """
            local old = redis.call('GET', KEYS[1])
            if old and redis.call('ZSCORE', KEYS[2], old) then
              local ok, m = pcall(cjson.decode, old)
              local ok2, n = pcall(cjson.decode, ARGV[3])
              if ok and ok2 and type(m) == 'table' and type(n) == 'table' and m['id'] then
                n['id'] = m['id']
                local member = cjson.encode(n)
                redis.call('ZREM', KEYS[2], old)
                redis.call('ZADD', KEYS[2], ARGV[2], member)
                redis.call('SET', KEYS[1], member, 'PX', ARGV[4])
                local job = ARGV[9] .. m['id']
                if redis.call('EXISTS', job) == 1 then redis.call('HSET', job, 'due', ARGV[2]) end
                return m['id']
              end
            end
            redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
            redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
            if ARGV[5] == '1' then
              redis.call('DEL', KEYS[3])
              redis.call('HSET', KEYS[3], 'state', 'SCHEDULED', 'task', ARGV[6], 'enqueuedAt', ARGV[7], 'retention', ARGV[8],
                'due', ARGV[2])
            end
            return ARGV[1]
            """;

    /**
     * Resumes a queue ('*') or a task: removes it from the paused set, then makes due now (by
     * Redis' clock) the parked messages of the delayed set (score at least the parked score) that
     * nothing paused holds any more, up to ARGV[4] from offset ARGV[3].
     * KEYS: paused set, delayed set. ARGV: member ('' to remove none: unpark only), parked score, offset, max.
     * Returns {moved, scanned}.
     */
    static final String RESUME = """
            redis.call('SREM', KEYS[1], ARGV[1])
            if redis.call('SISMEMBER', KEYS[1], '*') == 1 then return {0, 0} end
            local t = redis.call('TIME')
            local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
            local parked = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[2], '+inf', 'LIMIT', tonumber(ARGV[3]), tonumber(ARGV[4]))
            local moved = 0
            for _, member in ipairs(parked) do
              local ok, m = pcall(cjson.decode, member)
              local task = ok and type(m) == 'table' and m['task'] or nil
              if not task or redis.call('SISMEMBER', KEYS[1], task) == 0 then
                redis.call('ZADD', KEYS[2], now, member)
                moved = moved + 1
              end
            end
            return {moved, #parked}
            """;

    /** Every script of this class, for {@link LuaScripts#ALL}'s reload after NOSCRIPT. */
    static final java.util.List<String> ALL = java.util.List.of(SUBMIT_UNIQUE, RELEASE_UNIQUE, SUBMIT_DEBOUNCED, RESUME);
}
