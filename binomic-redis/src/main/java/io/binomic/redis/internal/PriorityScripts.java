package io.binomic.redis.internal;

/**
 * The Lua of priorities. A queue's messages of the default priority stay on its stream
 * ({@code binomic:{q}:stream}); each other level used has a stream of its own,
 * {@code binomic:{q}:stream:p<level>}, read through the same group, and the levels in use are the
 * members of the set {@code binomic:{q}:stream:levels}. All share the queue's hash tag: one Cluster
 * slot. The scripts that put a message back onto its queue (due moves, ticks, replays) derive the
 * level's keys from the queue's stream key, which they are given: same slot, so Cluster accepts them.
 */
final class PriorityScripts {
    private PriorityScripts() { }

    /**
     * {@code level_stream(stream, priority)}: the stream of a message of {@code priority} (a field
     * value, or nil) on the queue whose default stream is {@code stream}; a level used for the first
     * time gets its stream and group (from 0, so nothing added before is skipped) and joins the set of levels.
     */
    static final String LEVEL_FUNCTIONS = """
            local function level_stream(stream, priority)
              if type(priority) ~= 'string' or not string.match(priority, '^[0-9]$') or priority == '%d' then return stream end
              local key = stream .. ':p' .. priority
              if redis.call('EXISTS', key) == 0 then
                redis.pcall('XGROUP', 'CREATE', key, '%s', '0', 'MKSTREAM')
                redis.call('SADD', stream .. ':levels', priority)
              end
              return key
            end
            """.formatted(io.binomic.api.Priority.DEFAULT, RedisKeys.GROUP);

    /**
     * Enqueues a message of a priority other than the default on its level's stream (creating
     * stream, group and level on first use), and for a tracked job creates its record, in one step.
     * KEYS: the queue's default stream, and the job record for a tracked job.
     * ARGV: priority, task, enqueuedAt ms, retention ms ('' = not tracked), stream fields...
     */
    static final String ENQUEUE = LEVEL_FUNCTIONS + """
            redis.call('XADD', level_stream(KEYS[1], ARGV[1]), '*', unpack(ARGV, 5))
            if ARGV[4] ~= '' then
              redis.call('DEL', KEYS[2])
              redis.call('HSET', KEYS[2], 'state', 'QUEUED', 'task', ARGV[2], 'enqueuedAt', ARGV[3], 'retention', ARGV[4])
            end
            return 1
            """;

    /**
     * One non-blocking read of all the levels of a queue, up to max entries in total: the levels in
     * use are read from the set, highest first, or (turn t > 0: {@code PriorityFetchOrder}) starting
     * at the (1 + (t - 1) mod (m - 1))-th of the m levels. A stream that lost its group (Redis
     * restarted empty) gets it again. The consumer is created on each stream, so an idle worker is
     * listed (Redis before 7.2 creates it only on a delivery). A level whose read fails (its key is
     * not a stream: WRONGTYPE) is skipped and named in the reply: a script that failed after reading
     * other levels would leave their entries pending to the consumer with no reply to deliver them.
     * KEYS: the queue's default stream. ARGV: group, consumer, max, turn.
     * Returns a flat list: the number of levels, the levels (highest first), the first failed read
     * ({@code "<key>: <error>"}, or empty), then per entry: its level, id, number of field strings, fields...
     */
    static final String FETCH = """
            local group, consumer = ARGV[1], ARGV[2]
            local left, turn = tonumber(ARGV[3]), tonumber(ARGV[4])
            local levels = {%d}
            for _, p in ipairs(redis.call('SMEMBERS', KEYS[1] .. ':levels')) do
              if string.match(p, '^[0-9]$') and tonumber(p) ~= %d then levels[#levels + 1] = tonumber(p) end
            end
            table.sort(levels, function(a, b) return a > b end)
            local m = #levels
            local order = levels
            if turn > 0 and m >= 2 then
              order = {}
              local start = 1 + ((turn - 1) %% (m - 1))
              for i = 0, m - 1 do order[i + 1] = levels[((start + i) %% m) + 1] end
            end
            local out = {m}
            for _, p in ipairs(levels) do out[#out + 1] = p end
            out[#out + 1] = ''
            local problem = #out
            for _, p in ipairs(order) do
              if left <= 0 then break end
              local key = KEYS[1]
              if p ~= %d then key = KEYS[1] .. ':p' .. p end
              local ok = redis.pcall('XGROUP', 'CREATECONSUMER', key, group, consumer)
              if type(ok) == 'table' and ok.err then
                redis.pcall('XGROUP', 'CREATE', key, group, '0', 'MKSTREAM')
                redis.pcall('XGROUP', 'CREATECONSUMER', key, group, consumer)
              end
              local r = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', left, 'STREAMS', key, '>')
              if type(r) == 'table' and r.err then
                if out[problem] == '' then out[problem] = key .. ': ' .. r.err end
              elseif r then
                for _, e in ipairs(r[1][2]) do
                  out[#out + 1] = p
                  out[#out + 1] = e[1]
                  out[#out + 1] = #e[2]
                  for _, f in ipairs(e[2]) do out[#out + 1] = f end
                  left = left - 1
                end
              end
            end
            return out
            """.formatted(io.binomic.api.Priority.DEFAULT, io.binomic.api.Priority.DEFAULT, io.binomic.api.Priority.DEFAULT);

    /**
     * The levels of a queue in use: the members of its set of levels. With ARGV[1] = '1' it first
     * adds any level whose stream exists and is missing from the set: a set deleted (the fix its
     * WRONGTYPE error names) or lost would otherwise hide those streams' messages from every fetch,
     * reclaim and stats until a message of the same level was submitted again.
     * KEYS: the queue's default stream. ARGV: '1' to look for level streams, or '0'.
     */
    static final String LEVELS = """
            local set = KEYS[1] .. ':levels'
            if ARGV[1] == '1' then
              for p = 0, 9 do
                if p ~= %d and redis.call('EXISTS', KEYS[1] .. ':p' .. p) == 1 then redis.call('SADD', set, tostring(p)) end
              end
            end
            return redis.call('SMEMBERS', set)
            """.formatted(io.binomic.api.Priority.DEFAULT);

    /** Every script of this class, for loading them again after NOSCRIPT. */
    static final java.util.List<String> ALL = java.util.List.of(ENQUEUE, FETCH, LEVELS);
}
