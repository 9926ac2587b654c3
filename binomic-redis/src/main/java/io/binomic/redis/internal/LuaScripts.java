package io.binomic.redis.internal;

/**
 * The Lua scripts of the Redis broker. Each one is a single round trip and runs atomically:
 * that is what makes a retry and the ack of the failed delivery one step, and what lets many
 * workers move due messages without moving one twice. Every script touches the keys of one
 * queue only (one hash tag), so it also runs on Redis Cluster.
 */
final class LuaScripts {
    private LuaScripts() { }

    /**
     * Applies a job record update serialised by {@code RedisBroker.jobArguments} from ARGV[at]:
     * number of field strings, fields..., number of deletions, names..., expiry ms (0 = keep),
     * event channel, event message ('' = none). Returns the index after it.
     */
    static final String JOB_FUNCTIONS = """
            local function skip_job(at)
              local ns = tonumber(ARGV[at])
              local nd = tonumber(ARGV[at + 1 + ns])
              return at + 2 + ns + nd + 3
            end
            local function apply_job(key, at)
              local ns = tonumber(ARGV[at])
              if ns > 0 then redis.call('HSET', key, unpack(ARGV, at + 1, at + ns)) end
              local j = at + 1 + ns
              local nd = tonumber(ARGV[j])
              if nd > 0 then redis.call('HDEL', key, unpack(ARGV, j + 1, j + nd)) end
              j = j + 1 + nd
              local ttl = tonumber(ARGV[j])
              if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
              if ARGV[j + 2] ~= '' then redis.call('PUBLISH', ARGV[j + 1], ARGV[j + 2]) end
              return j + 3
            end
            local function is_final(state)
              return state == 'SUCCEEDED' or state == 'DEAD_LETTERED' or state == 'CANCELLED'
            end
            """;

    /**
     * Enqueues a tracked message and creates its record, atomically (a worker that fetched it at
     * once must find the record, not have its RUNNING overwritten by a late QUEUED).
     * KEYS: stream, job. ARGV: task, enqueuedAt ms, retention ms, stream fields...
     */
    static final String ENQUEUE_TRACKED = """
            redis.call('XADD', KEYS[1], '*', unpack(ARGV, 4))
            redis.call('DEL', KEYS[2])
            redis.call('HSET', KEYS[2], 'state', 'QUEUED', 'task', ARGV[1], 'enqueuedAt', ARGV[2], 'retention', ARGV[3])
            return 1
            """;

    /**
     * Schedules a tracked message and creates its record, atomically.
     * KEYS: delayed set, job. ARGV: task, enqueuedAt ms, retention ms, due ms, member.
     */
    static final String SCHEDULE_TRACKED = """
            redis.call('ZADD', KEYS[1], ARGV[4], ARGV[5])
            redis.call('DEL', KEYS[2])
            redis.call('HSET', KEYS[2], 'state', 'SCHEDULED', 'task', ARGV[1], 'enqueuedAt', ARGV[2], 'retention', ARGV[3],
                'due', ARGV[4])
            return 1
            """;

    /**
     * Marks jobs started unless their record says they ended or were cancelled.
     * KEYS: job records of one queue. ARGV: one job update per key. Returns the (1-based) positions not started.
     */
    static final String START_JOBS = JOB_FUNCTIONS + """
            local out, at = {}, 1
            local t = redis.call('TIME')
            local now = tostring(t[1] * 1000 + math.floor(t[2] / 1000))
            for k = 1, #KEYS do
              local key = KEYS[k]
              local state = redis.call('HGET', key, 'state')
              if is_final(state) then
                out[#out + 1] = k
                at = skip_job(at)
              elseif redis.call('HGET', key, 'cancelRequested') == '1' then
                -- cancelled while an earlier attempt ran on a worker that stopped: it ends here, not run again
                redis.call('HSET', key, 'state', 'CANCELLED', 'endedAt', now)
                redis.call('PEXPIRE', key, math.max(1, tonumber(redis.call('HGET', key, 'retention') or '3600000')))
                local ns = tonumber(ARGV[at])
                local nd = tonumber(ARGV[at + 1 + ns])
                redis.call('PUBLISH', ARGV[at + 2 + ns + nd + 1], 'E ' .. string.sub(key, -36))
                out[#out + 1] = k
                at = skip_job(at)
              else
                if state == 'RUNNING' then
                  -- the attempt that was running never ended: its worker stopped, and it was reclaimed
                  local attempt = redis.call('HGET', key, 'attempt')
                  if attempt and redis.call('HEXISTS', key, 'a.' .. attempt) == 0 then
                    redis.call('HSET', key, 'a.' .. attempt, (redis.call('HGET', key, 'worker') or '') .. '\\t'
                      .. (redis.call('HGET', key, 'startedAt') or now) .. '\\t' .. now .. '\\tabandoned\\t'
                      .. 'its worker stopped before it ended; the job was reclaimed')
                  end
                end
                at = apply_job(key, at)
              end
            end
            return out
            """;

    /** Applies a job update to a RUNNING job only. KEYS: job. ARGV: one job update. */
    static final String UPDATE_RUNNING_JOB = JOB_FUNCTIONS + """
            if redis.call('HGET', KEYS[1], 'state') == 'RUNNING' then apply_job(KEYS[1], 1) return 1 end
            return 0
            """;

    /**
     * Cancels a job. KEYS: job. ARGV: the CANCELLED update. Returns 0 not found, 1 already ended,
     * 2 cancel requested (running), 3 cancelled.
     */
    static final String CANCEL_JOB = JOB_FUNCTIONS + FlowScripts.UNIQUE_FUNCTIONS + """
            local state = redis.call('HGET', KEYS[1], 'state')
            if not state then return 0 end
            if is_final(state) then return 1 end
            if state == 'RUNNING' then
              redis.call('HSET', KEYS[1], 'cancelRequested', '1')
              local ns = tonumber(ARGV[1])
              local nd = tonumber(ARGV[2 + ns])
              local channel = ARGV[2 + ns + nd + 2]
              local id = string.sub(ARGV[2 + ns + nd + 3], 3)
              redis.call('PUBLISH', channel, 'C ' .. id)
              return 2
            end
            apply_job(KEYS[1], 1)
            release_unique_of_job(KEYS[1])
            local retention = tonumber(redis.call('HGET', KEYS[1], 'retention') or '3600000')
            redis.call('PEXPIRE', KEYS[1], math.max(1, retention))
            return 3
            """;

    /**
     * Puts a tracked job replayed from the dead-letter queue back to QUEUED, keeping its history.
     * KEYS: job. ARGV: task, enqueuedAt ms, retention ms.
     */
    static final String REQUEUE_JOB = """
            redis.call('HDEL', KEYS[1], 'endedAt', 'reason', 'due', 'cancelRequested', 'result')
            redis.call('HSET', KEYS[1], 'state', 'QUEUED', 'task', ARGV[1], 'enqueuedAt', ARGV[2], 'retention', ARGV[3])
            redis.call('PERSIST', KEYS[1])
            return 1
            """;

    /**
     * The flow-limit functions shared by {@link #ADMIT}, {@link #SETTLE} and {@link #RECLAIM}. The
     * keys they touch are named from the stream key's hash tag (same Cluster slot): {@code held}
     * (hash: receipt of an admitted delivery to the concurrency limits it holds slots of),
     * {@code slots:<limit>} (sorted set of the receipts holding a slot), {@code wait:<limit>} (sorted
     * set of the delayed-set members waiting for a slot, higher priority first, then oldest), {@code rate:<limit>} (the
     * GCRA theoretical arrival time, epoch ms, expiring when it passes).
     * {@code lim_release} frees the slots of a settled delivery and moves, per slot, the oldest live
     * waiter back onto the stream with the turn header; it does nothing (one EXISTS per call) on a
     * queue where no delivery holds an admission.
     */
    static final String LIMIT_FUNCTIONS = PriorityScripts.LEVEL_FUNCTIONS + """
            local function lim_now()
              local t = redis.call('TIME')
              return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            end
            local function lim_base(stream)
              -- the queue's prefix ('...{queue}:') of its default stream or of a priority level's ('...:stream:p7')
              local e = string.find(stream, '}:[^}]*$')
              return string.sub(stream, 1, e + 1)
            end
            local function lim_member(stream, id)
              -- entry ids are unique per stream only: a level stream's carry its level
              local level = string.match(stream, ':stream:p(%d)$')
              if level then return id .. '/' .. level end
              return id
            end
            local function lim_move_now(stream, member, now)
              if redis.call('ZREM', lim_base(stream) .. 'delayed', member) == 0 then return false end
              local ok, m = pcall(cjson.decode, member)
              if not ok or type(m) ~= 'table' then
                redis.call('XADD', lim_base(stream) .. 'stream', '*', 'raw', member)
                return true
              end
              local h = {codec = 'json-jdk'}
              if m['headers'] ~= nil and m['headers'] ~= cjson.null then
                local ok2, hh = pcall(cjson.decode, m['headers'])
                if ok2 and type(hh) == 'table' then h = hh end
              end
              h['limit.turn'] = tostring(m['attempt'])
              m['headers'] = cjson.encode(h)
              -- back onto the stream of its priority level (PriorityScripts.LEVEL_FUNCTIONS)
              local args = {level_stream(lim_base(stream) .. 'stream', m['priority']), '*'}
              for _, name in ipairs({'priority', 'id', 'task', 'queue', 'attempt', 'payload', 'payload64', 'headers'}) do
                local v = m[name]
                if v ~= nil and v ~= cjson.null then
                  args[#args + 1] = name
                  args[#args + 1] = tostring(v)
                end
              end
              args[#args + 1] = 'enqueuedAt'
              args[#args + 1] = string.format('%d', now)
              redis.call('XADD', unpack(args))
              return true
            end
            local function lim_promote(stream, lid, now)
              local wkey = lim_base(stream) .. 'wait:' .. lid
              for _ = 1, 100 do
                local w = redis.call('ZPOPMIN', wkey)
                if #w == 0 then return false end
                if lim_move_now(stream, w[1], now) then return true end
              end
              return false
            end
            local lim_any = nil
            local function lim_release(stream, id)
              if lim_any == nil then lim_any = redis.call('EXISTS', lim_base(stream) .. 'held') == 1 end
              if not lim_any then return end
              local held = lim_base(stream) .. 'held'
              local member = lim_member(stream, id)
              local lids = redis.call('HGET', held, member)
              if not lids then return end
              redis.call('HDEL', held, member)
              local now = nil
              for lid in string.gmatch(lids, '%S+') do
                redis.call('ZREM', lim_base(stream) .. 'slots:' .. lid, member)
                if redis.call('EXISTS', lim_base(stream) .. 'wait:' .. lid) == 1 then
                  now = now or lim_now()
                  lim_promote(stream, lid, now)
                end
              end
            end
            """;

    /**
     * The flow-control decision on deliveries of one queue ({@code Broker.admit}), each atomic with
     * its effect. KEYS: stream, delayed, held, then the records of tracked jobs. ARGV: group,
     * consumer, slot-wait fallback ms, then per delivery: id, delivery count, stored attempt,
     * rate-admitted (1/0), turn (1/0), index of its job record in KEYS (0: none), number of limits,
     * then per limit: 'r' or 'c', limit id, permits, interval ms, burst. Returns per delivery a code
     * (R run, W waits for its rate limit, S waits for a slot, N not pending under this consumer) and
     * the due time (epoch ms, Redis' clock).
     */
    static final String ADMIT = LIMIT_FUNCTIONS + """
            local group, consumer, fallback = ARGV[1], ARGV[2], tonumber(ARGV[3])
            local base = lim_base(KEYS[1])
            local now = lim_now()
            local out = {}
            local i = 4
            while i <= #ARGV do
              local id, count, attempt = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
              local rate_ok, turn, jk, nl = ARGV[i + 3] == '1', ARGV[i + 4] == '1', tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6])
              local lim = i + 7
              i = lim + nl * 5
              local code, due = 'R', now
              local p = redis.call('XPENDING', KEYS[1], group, id, id, 1)
              if #p ~= 1 or p[1][2] ~= consumer or tonumber(p[1][4]) < count then
                code = 'N'
              elseif redis.call('HEXISTS', KEYS[3], lim_member(KEYS[1], id)) == 0 then
                local wait_lid, conc = nil, {}
                for j = 0, nl - 1 do
                  local at = lim + j * 5
                  if ARGV[at] == 'c' then
                    local lid = ARGV[at + 1]
                    local free = redis.call('ZCARD', base .. 'slots:' .. lid) < tonumber(ARGV[at + 2])
                    if free and not turn then
                      -- a free slot, but messages waiting for one go first: drop the stale ones (moved back
                      -- meanwhile by their fallback), give the slot to the oldest live one, and queue behind it
                      local wkey = base .. 'wait:' .. lid
                      while true do
                        local head = redis.call('ZRANGE', wkey, 0, 0)
                        if #head == 0 then break end
                        if redis.call('ZSCORE', KEYS[2], head[1]) then
                          redis.call('ZREM', wkey, head[1])
                          lim_move_now(KEYS[1], head[1], now)
                          free = false
                          break
                        end
                        redis.call('ZREM', wkey, head[1])
                      end
                    end
                    if not free then
                      wait_lid = lid
                      break
                    end
                    conc[#conc + 1] = lid
                  end
                end
                if wait_lid then
                  code, due = 'S', now + fallback
                else
                  -- rate limits, GCRA on the actual starts ('t', strict: at most one start per interval, plus the burst),
                  -- and the waiting line ('r': the next turn to hand out; 'w': when a message that waited its turn last
                  -- started). A message that waited its turn starts when a start is allowed; a new one also needs the line
                  -- to be empty, or stuck (no waiting message started for two intervals, e.g. while they are behind a
                  -- backlog on the stream), so it never takes the turn of one that is coming
                  local conform, line, can_jump, nr = now, now, true, 0
                  for j = 0, nl - 1 do
                    local at = lim + j * 5
                    if ARGV[at] == 'r' then
                      nr = nr + 1
                      local st = redis.call('HMGET', base .. 'rate:' .. ARGV[at + 1], 't', 'r', 'w')
                      local interval = tonumber(ARGV[at + 3])
                      local tat, turn_at, last = tonumber(st[1] or now), tonumber(st[2] or 0), tonumber(st[3] or 0)
                      -- tolerance: the burst, plus one interval of jitter (a start a little late must not cost the next one its turn)
                      conform = math.max(conform, tat - tonumber(ARGV[at + 4]) * interval)
                      line = math.max(line, turn_at)
                      if turn_at > now and now - last <= math.max(2 * interval, 250) then can_jump = false end
                    end
                  end
                  if nr > 0 then
                    local runs = conform <= now and (rate_ok or can_jump)
                    if not runs then code, due = 'W', math.max(conform, line) end
                    for j = 0, nl - 1 do
                      local at = lim + j * 5
                      if ARGV[at] == 'r' then
                        local key = base .. 'rate:' .. ARGV[at + 1]
                        local interval = tonumber(ARGV[at + 3])
                        if runs then
                          local tat = math.max(tonumber(redis.call('HGET', key, 't') or now), now) + interval
                          redis.call('HSET', key, 't', string.format('%d', tat))
                          if rate_ok then redis.call('HSET', key, 'w', string.format('%d', now)) end
                        else
                          redis.call('HSET', key, 'r', string.format('%d', due + interval))
                        end
                        local keep = math.max(tonumber(redis.call('HGET', key, 't') or now), tonumber(redis.call('HGET', key, 'r') or now))
                        redis.call('PEXPIRE', key, math.max(1, keep - now) + 2 * interval + 250)
                      end
                    end
                  end
                end
                if code == 'R' then
                  local member = lim_member(KEYS[1], id)
                  for _, lid in ipairs(conc) do redis.call('ZADD', base .. 'slots:' .. lid, now, member) end
                  redis.call('HSET', KEYS[3], member, table.concat(conc, ' '))
                  if jk > 0 then redis.call('HDEL', KEYS[jk], 'waiting') end
                else
                  local r = redis.call('XRANGE', KEYS[1], id, id)
                  redis.call('XACK', KEYS[1], group, id)
                  if #r == 1 then
                    local m = {}
                    local kv = r[1][2]
                    for j = 1, #kv, 2 do m[kv[j]] = kv[j + 1] end
                    m['enqueuedAt'] = nil
                    local h = {codec = 'json-jdk'}
                    if m['headers'] then
                      local ok, hh = pcall(cjson.decode, m['headers'])
                      if ok and type(hh) == 'table' then h = hh end
                    end
                    h['limit.turn'] = nil
                    if code == 'W' then h['limit.rate'] = attempt end
                    m['headers'] = cjson.encode(h)
                    local member = cjson.encode(m)
                    redis.call('ZADD', KEYS[2], due, member)
                    if code == 'S' then
                      -- the line for a slot: higher priority first, then oldest first (1e13 ms is over 300 years)
                      local p = tonumber(m['priority'] or '5') or 5
                      redis.call('ZADD', base .. 'wait:' .. wait_lid, string.format('%d', (9 - p) * 10000000000000 + now), member)
                    end
                    if jk > 0 then
                      local state = redis.call('HGET', KEYS[jk], 'state')
                      if state and state ~= 'SUCCEEDED' and state ~= 'DEAD_LETTERED' and state ~= 'CANCELLED' then
                        redis.call('HSET', KEYS[jk], 'state', 'SCHEDULED', 'due', string.format('%d', due),
                          'waiting', code == 'W' and 'rate limit' or 'concurrency limit')
                      end
                    end
                  else
                    code = 'N'
                  end
                end
              end
              out[#out + 1] = code
              out[#out + 1] = string.format('%d', due)
            end
            return out
            """;

    /** Entries per fence listing in {@link #SETTLE}: one XPENDING call per run, its overhead spread over the run. */
    static final int FENCE_RUN = 64;

    /** A lone settlement {@link #SETTLE} fences alone: a listing of one entry saves nothing. */
    static final int FENCE_MIN = 2;

    /**
     * Settles deliveries of one queue, each fenced: it is applied only if the entry is still
     * pending and owned by this consumer, with a delivery count at least the one the settling
     * worker was handed (a consumer that reclaimed an entry it still held settles it either way).
     * Otherwise it is a no-op. An ack is an XACK (no XDEL: acknowledged entries are trimmed in bulk
     * by {@link #TRIM_ACKED}); a retry is the XACK and a ZADD onto the delayed set; a dead letter is
     * the XACK and an XADD to the dead-letter stream, bounded by count (approximately) and by age (MINID).
     * <p>
     * The fence reads owner and count with one {@code XPENDING start end count consumer} per run of
     * {@code FENCE_RUN} entries (the caller sends them in id order), which lists this consumer's pending
     * entries in the run's id range: on a settle batch that is dense in the consumer's pending entries
     * it costs less than half of an {@code XPENDING id id 1} per entry, whose call overhead dominates.
     * An entry not in the listing (owned by another consumer, not pending, or past a listing cut at
     * twice the run) gets the exact per-entry {@code XPENDING}, which also says which of the two it
     * is; once a listing is cut the batch is sparse, and the rest of it goes per entry, so a sparse
     * batch costs about what it did before.
     * KEYS: stream, delayed, dlq. ARGV: group, consumer, dlq max count, dlq min id, then per
     * settlement: id (an ack of a first delivery) | 'A', id, count | 'R', id, count, due epoch ms,
     * member | 'D', id, count, n, n field strings;
     * a tracked job's settlement is followed by 'J', index of its record in KEYS, and its update
     * ({@link #JOB_FUNCTIONS}), applied only when the settlement is; a unique job's by 'U', index of
     * its key in KEYS, job id. Returns the 1-based positions of the settlements not applied: positive
     * when the entry is pending under another consumer, negative when it is not pending at all.
     */
    private static final String SETTLE_BODY = JOB_FUNCTIONS + FlowScripts.UNIQUE_FUNCTIONS + LIMIT_FUNCTIONS + """
            local group, consumer = ARGV[1], ARGV[2]
            -- the settlements' ids, in order (markers are one character, an entry id is longer)
            local ids = {}
            local i = 5
            while i <= #ARGV do
              local a = ARGV[i]
              if #a > 1 then ids[#ids + 1] = a i = i + 1
              elseif a == 'U' then i = i + 3
              elseif a == 'J' then i = skip_job(i + 2)
              else
                ids[#ids + 1] = ARGV[i + 1]
                if a == 'A' then i = i + 3 elseif a == 'R' then i = i + 5 else i = i + 4 + tonumber(ARGV[i + 3]) end
              end
            end
            -- this consumer's delivery count of each entry pending under it, listed run by run
            local mine, run, listing = {}, FENCE_RUN, #ids >= FENCE_MIN
            local from = 1
            while listing and from <= #ids do
              local to = math.min(#ids, from + run - 1)
              local cut = 2 * (to - from + 1)
              local p = redis.call('XPENDING', KEYS[1], group, ids[from], ids[to], cut, consumer)
              for j = 1, #p do mine[p[j][1]] = tonumber(p[j][4]) end
              if #p >= cut then listing = false end
              from = to + 1
            end
            local skipped, acks, seen = {}, {}, {}
            local n, owned = 0, false
            i = 5
            while i <= #ARGV do
              local kind = ARGV[i]
              if kind == 'U' then
                -- a unique job's key, given back with the ack or dead letter just before: only with it (FlowScripts)
                if owned then release_unique(KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2]) end
                i = i + 3
              elseif kind == 'J' then
                -- the job record update of the settlement just before: applied only with it
                if owned then i = apply_job(KEYS[tonumber(ARGV[i + 1])], i + 2) else i = skip_job(i + 2) end
              else
              local id, count
              if #kind > 1 then
                id, count, kind = kind, 1, 'A'
              else
                id, count = ARGV[i + 1], tonumber(ARGV[i + 2])
              end
              n = n + 1
              owned = false
              local why = -n
              if seen[id] == nil then
                local c = mine[id]
                if c ~= nil then
                  owned = c >= count
                  why = n
                else
                  local p = redis.call('XPENDING', KEYS[1], group, id, id, 1)
                  if #p == 1 then
                    owned = p[1][2] == consumer and tonumber(p[1][4]) >= count
                    why = n
                  end
                end
                -- a later settlement of the same entry in this call: not pending once this one applies
                seen[id] = (owned or why < 0) and -1 or 1
              else
                why = seen[id] * n
              end
              if kind == 'A' then
                if owned then acks[#acks + 1] = id end
                if #ARGV[i] > 1 then i = i + 1 else i = i + 3 end
              elseif kind == 'R' then
                if owned then
                  redis.call('XACK', KEYS[1], group, id)
                  redis.call('ZADD', KEYS[2], ARGV[i + 3], ARGV[i + 4])
                end
                i = i + 5
              else
                local fields = tonumber(ARGV[i + 3])
                if owned then
                  redis.call('XACK', KEYS[1], group, id)
                  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', unpack(ARGV, i + 4, i + 3 + fields))
                  redis.call('XTRIM', KEYS[3], 'MINID', ARGV[4])
                end
                i = i + 4 + fields
              end
              if not owned then skipped[#skipped + 1] = why end
              if owned then lim_release(KEYS[1], id) end -- frees its concurrency slots, if it holds any (LIMIT_FUNCTIONS)
              end
            end
            for from = 1, #acks, 1000 do
              redis.call('XACK', KEYS[1], group, unpack(acks, from, math.min(#acks, from + 999)))
            end
            return skipped
            """;

    static final String SETTLE = settle(FENCE_MIN);

    /**
     * {@link #SETTLE} with the fence of one {@code XPENDING} per entry, as before the listing. Only for
     * the benchmark's before/after (issue 14), selected by {@code -Dbinomic.bench.settlePerEntry=true}.
     */
    static final String SETTLE_PER_ENTRY = settle(Integer.MAX_VALUE);

    private static String settle(int fenceMin) {
        return SETTLE_BODY.replace("FENCE_RUN", Integer.toString(FENCE_RUN)).replace("FENCE_MIN", Integer.toString(fenceMin));
    }

    /**
     * {@link #SETTLE} as the ack path was before fenced settlement: each acked entry is also deleted
     * ({@code XDEL}, by batch). Only for the benchmark's before/after of the ack path (issue 14),
     * selected by {@code -Dbinomic.bench.xdelPerAck=true} in {@link RedisBroker}.
     */
    static final String SETTLE_XDEL = replaceOnce(SETTLE,
            "redis.call('XACK', KEYS[1], group, unpack(acks, from, math.min(#acks, from + 999)))",
            "redis.call('XACK', KEYS[1], group, unpack(acks, from, math.min(#acks, from + 999)))\n"
                    + "              redis.call('XDEL', KEYS[1], unpack(acks, from, math.min(#acks, from + 999)))");

    private static String replaceOnce(String text, String what, String with) {
        if (text.indexOf(what) < 0 || text.indexOf(what) != text.lastIndexOf(what)) {
            throw new IllegalStateException("not exactly once in the script: " + what);
        }
        return text.replace(what, with);
    }

    /**
     * The entries pending under one consumer, with their delivery counts and fields, unchanged.
     * KEYS: stream. ARGV: group, consumer, max. Returns per entry: id, delivery count, number of
     * field strings, fields... (an entry deleted from the stream is skipped).
     */
    static final String PENDING_OF = """
            local out = {}
            local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[3]), ARGV[2])
            for _, e in ipairs(p) do
              local r = redis.call('XRANGE', KEYS[1], e[1], e[1])
              if #r == 1 then
                out[#out + 1] = e[1]
                out[#out + 1] = tostring(e[4])
                out[#out + 1] = tostring(#r[1][2])
                for _, f in ipairs(r[1][2]) do out[#out + 1] = f end
              end
            end
            return out
            """;

    /**
     * Removes acknowledged entries from the front of the stream: everything older than both the
     * group's oldest pending entry and its last-delivered id has been delivered and acked, so
     * {@code XTRIM MINID} below that bound removes only finished work (never an undelivered or
     * unacked entry). Approximate ({@code ~}): whole stream nodes go, which is what makes it far
     * cheaper than an XDEL per entry. At most 100,000 entries per call (with {@code ~} and no LIMIT,
     * Redis stops at 10,000, which falls behind a fast drain trimmed a few times a second); skipped
     * when the stream has any group but ours.
     * KEYS: stream. ARGV: group. Returns how many entries were removed.
     */
    static final String TRIM_ACKED = """
            local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
            if type(groups) ~= 'table' or groups.err or #groups ~= 1 then return 0 end
            local name, last
            for j = 1, #groups[1], 2 do
              if groups[1][j] == 'name' then name = groups[1][j + 1]
              elseif groups[1][j] == 'last-delivered-id' then last = groups[1][j + 1] end
            end
            if name ~= ARGV[1] or not last or last == '0-0' then return 0 end
            -- the bound: the entry after the last-delivered one, or the oldest pending entry if that is older
            -- (it always is, unless XGROUP SETID moved the group back: then entries after it are undelivered again)
            local dash = string.find(last, '-', 1, true)
            local lms, lseq = tonumber(string.sub(last, 1, dash - 1)), tonumber(string.sub(last, dash + 1))
            local bound = string.sub(last, 1, dash - 1) .. '-' .. string.format('%d', lseq + 1)
            local p = redis.call('XPENDING', KEYS[1], ARGV[1])
            if tonumber(p[1]) > 0 then
              local pdash = string.find(p[2], '-', 1, true)
              local pms, pseq = tonumber(string.sub(p[2], 1, pdash - 1)), tonumber(string.sub(p[2], pdash + 1))
              if pms < lms or (pms == lms and pseq <= lseq) then bound = p[2] end
            end
            return redis.call('XTRIM', KEYS[1], 'MINID', '~', bound, 'LIMIT', 100000)
            """;

    /**
     * Moves due members of the delayed set onto the stream with a fresh enqueuedAt, and removes
     * them, in one atomic step. Due means by Redis' own clock ({@code TIME}), never a client's, so
     * a worker whose clock runs ahead cannot move messages early. A member that is not valid JSON
     * is still moved (as field 'raw'), so that it surfaces as a malformed delivery and is
     * dead-lettered, not lost. KEYS: delayed, stream. ARGV: max. Returns how many moved.
     * A message with a priority field goes to its level's stream ({@link PriorityScripts}).
     */
    static final String MOVE_DUE = PriorityScripts.LEVEL_FUNCTIONS + """
            local t = redis.call('TIME')
            local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
            local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
            local names = {'id', 'task', 'queue', 'attempt', 'payload', 'payload64', 'headers'}
            for _, member in ipairs(due) do
              local ok, m = pcall(cjson.decode, member)
              if ok and type(m) == 'table' then
                local args = {level_stream(KEYS[2], m['priority']), '*'}
                if type(m['priority']) == 'string' then args[#args + 1] = 'priority'; args[#args + 1] = m['priority'] end
                for _, name in ipairs(names) do
                  local v = m[name]
                  if v ~= nil and v ~= cjson.null then
                    args[#args + 1] = name
                    args[#args + 1] = tostring(v)
                  end
                end
                args[#args + 1] = 'enqueuedAt'
                args[#args + 1] = now
                redis.call('XADD', unpack(args))
              else
                redis.call('XADD', KEYS[2], '*', 'raw', member)
              end
              redis.call('ZREM', KEYS[1], member)
            end
            return #due
            """;

    /**
     * Resets the idle time of entries still owned by the consumer (at least at the delivery count it holds)
     * (XCLAIM ... JUSTID keeps the delivery count). An entry another consumer has reclaimed
     * meanwhile is left alone, so a worker that was frozen does not steal it back.
     * KEYS: stream. ARGV: group, consumer, then id, delivery count pairs. Returns how many were renewed.
     */
    static final String RENEW_LEASES = """
            local n = 0
            for i = 3, #ARGV, 2 do
              local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
              if #p == 1 and p[1][2] == ARGV[2] and tonumber(p[1][4]) >= tonumber(ARGV[i + 1]) then
                redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
                n = n + 1
              end
            end
            return n
            """;

    /**
     * XAUTOCLAIM following the cursor until max entries, then reads each claimed entry's delivery
     * count from the PEL (XAUTOCLAIM has just incremented it). Entries deleted from the stream are
     * dropped from the PEL by XAUTOCLAIM itself and skipped here. The scan starts where the last
     * call stopped and wraps around once, and it is capped at 100 XAUTOCLAIM calls, so a huge PEL
     * of healthy entries never blocks Redis for long.
     * KEYS: stream. ARGV: group, consumer, min idle ms, max, start cursor.
     * Returns a flat list: the next cursor, then per entry: id, delivery count, number of field strings, fields...
     */
    static final String RECLAIM = LIMIT_FUNCTIONS + """
            local max = tonumber(ARGV[4])
            local out = {''}
            local n = 0
            local cursor = ARGV[5]
            local wrapped = cursor == '0-0'
            local calls = 0
            while n < max and calls < 100 do
              local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], cursor, 'COUNT', max - n)
              calls = calls + 1
              cursor = r[1]
              for _, gone in ipairs(r[3] or {}) do lim_release(KEYS[1], gone) end -- deleted while pending: free its slots
              for _, e in ipairs(r[2]) do
                if type(e) == 'table' and type(e[2]) == 'table' then
                  local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
                  local count = 1
                  if #p == 1 then count = p[1][4] end
                  out[#out + 1] = e[1]
                  out[#out + 1] = tostring(count)
                  out[#out + 1] = tostring(#e[2])
                  for _, f in ipairs(e[2]) do out[#out + 1] = f end
                  n = n + 1
                end
              end
              if cursor == '0-0' then
                if wrapped then break end
                wrapped = true
              end
            end
            out[1] = cursor
            return out
            """;

    /**
     * Fires a periodic job's tick: claims it and enqueues its message in one step, so a claimed
     * tick always has its message. Judged by Redis' clock ({@code TIME}): a tick still in the future
     * is refused, so a client whose clock runs ahead neither fires early nor, by claiming a future
     * tick, blocks the ticks of the others. The claim expires after the given lifetime. The XADD
     * comes before the SET: if anything failed between them, the worst is a tick fired twice, never
     * a claim without its message.
     * A message with a priority field goes to its level's stream ({@link PriorityScripts}).
     * KEYS: claim key, stream. ARGV: tick epoch ms, claim lifetime ms, then the message's
     * field/value pairs without enqueuedAt (stamped here with Redis' time).
     * Returns {outcome, Redis time in epoch ms}: outcome 0 = not due, 1 = already fired, 2 = fired.
     */
    static final String CLAIM_TICK = PriorityScripts.LEVEL_FUNCTIONS + """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local tick = tonumber(ARGV[1])
            if tick > now then return {0, now} end
            local last = redis.call('GET', KEYS[1])
            if last and tonumber(last) >= tick then return {1, now} end
            local args = {KEYS[2], '*'}
            for i = 3, #ARGV do args[#args + 1] = ARGV[i] end
            for i = 3, #ARGV - 1, 2 do if ARGV[i] == 'priority' then args[1] = level_stream(KEYS[2], ARGV[i + 1]) end end
            args[#args + 1] = 'enqueuedAt'
            args[#args + 1] = string.format('%d', now)
            redis.call('XADD', unpack(args))
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            return {2, now}
            """;

    /**
     * Moves dead letters back onto the stream with attempt 1, a fresh enqueuedAt and the
     * replayedFrom header, deleting each from the DLQ in the same step. Entries without a
     * decodable message (stored as 'raw') are left where they are.
     * A message with a priority field goes to its level's stream ({@link PriorityScripts}).
     * KEYS: dlq, stream. ARGV: now epoch ms, dead-letter ids... Returns how many replayed.
     */
    static final String REPLAY = PriorityScripts.LEVEL_FUNCTIONS + """
            local n = 0
            for i = 2, #ARGV do
              local r = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])
              if #r == 1 then
                local f = {}
                local kv = r[1][2]
                for j = 1, #kv, 2 do f[kv[j]] = kv[j + 1] end
                local ok, h = pcall(cjson.decode, f['headers'] or '{"codec":"json-jdk"}')
                if ok and type(h) == 'table' and f['id'] and f['task'] and f['queue'] and (f['payload'] or f['payload64']) then
                  h['replayedFrom'] = ARGV[i]
                  local args = {level_stream(KEYS[2], f['priority']), '*', 'id', f['id'], 'task', f['task'], 'queue', f['queue'],
                                'attempt', '1', 'enqueuedAt', ARGV[1]}
                  if f['priority'] then args[#args + 1] = 'priority'; args[#args + 1] = f['priority'] end
                  if f['payload'] then
                    args[#args + 1] = 'payload'
                    args[#args + 1] = f['payload']
                  else
                    args[#args + 1] = 'payload64'
                    args[#args + 1] = f['payload64']
                  end
                  args[#args + 1] = 'headers'
                  args[#args + 1] = cjson.encode(h)
                  redis.call('XADD', unpack(args))
                  redis.call('XDEL', KEYS[1], ARGV[i])
                  n = n + 1
                end
              end
            end
            return n
            """;

    /**
     * Counts of one queue. Ready is the group's lag (entries not yet delivered), not the stream's
     * length minus pending: acked entries stay in the stream until {@link #TRIM_ACKED} removes them.
     * Where Redis cannot tell the lag (an XDEL after the last delivered entry), the entries after the
     * last-delivered id are counted, up to 100,000. The lag is never trusted beyond the stream's
     * length, nor when no entry lies after the last-delivered id: Redis 7.0's read counter can drift
     * (a chaos run saw a lag of 92 on an empty stream whose every entry had been delivered, after
     * restarts from the append-only file), and ready messages that are not there look like a stuck queue.
     * KEYS: stream, delayed, dlq. ARGV: group.
     * Returns: ready, pending, delayed, dead letters, consumers.
     */
    static final String STATS = """
            local len = redis.call('XLEN', KEYS[1])
            local ready, pending, consumers = len, 0, 0
            local function after(a, b)
              local am, as = string.match(a, '^(%d+)-(%d+)$')
              local bm, bs = string.match(b, '^(%d+)-(%d+)$')
              am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
              return am > bm or (am == bm and as > bs)
            end
            local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
            if type(groups) == 'table' and not groups.err then
              for _, g in ipairs(groups) do
                local f = {}
                for j = 1, #g, 2 do f[g[j]] = g[j + 1] end
                if f['name'] == ARGV[1] then
                  pending, consumers = f['pending'], f['consumers']
                  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
                  if #last == 0 or not after(last[1][1], f['last-delivered-id']) then
                    ready = 0
                  elseif type(f['lag']) == 'number' then
                    ready = math.min(f['lag'], len)
                  else
                    ready = #redis.call('XRANGE', KEYS[1], '(' .. f['last-delivered-id'], '+', 'COUNT', 100000)
                  end
                end
              end
            end
            return {ready, pending, redis.call('ZCARD', KEYS[2]), redis.call('XLEN', KEYS[3]), consumers}
            """;

    /**
     * Deletes consumers with nothing pending that were idle at least ARGV[2] ms.
     * KEYS: stream. ARGV: group, idle ms. Returns how many were removed.
     */
    static final String REMOVE_IDLE_CONSUMERS = """
            local cs = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
            if type(cs) ~= 'table' or cs.err then return 0 end
            local n = 0
            for _, c in ipairs(cs) do
              local name, pending, idle
              for j = 1, #c, 2 do
                if c[j] == 'name' then name = c[j + 1]
                elseif c[j] == 'pending' then pending = c[j + 1]
                elseif c[j] == 'idle' then idle = c[j + 1] end
              end
              if name and pending == 0 and idle and idle >= tonumber(ARGV[2]) then
                redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
                n = n + 1
              end
            end
            return n
            """;

    /** Reads the last fired tick of a periodic job. KEYS: its claim. Returns {tick epoch ms}, or {} when none is kept. */
    static final String READ_TICK = """
            local v = redis.call('GET', KEYS[1])
            if v then return {v} end
            return {}
            """;

    /**
     * Adds one process's counts to minute buckets of the dashboard's activity (hashes, each
     * expiring {@code ttl} after its last write): HINCRBY of the counts, the longest run kept as a
     * maximum. KEYS: the bucket of each minute. ARGV: ttl ms, then per key: succeeded, failed,
     * retried, deadLettered, runNanos, maxRunNanos.
     */
    static final String ADD_ACTIVITY = """
            for i = 1, #KEYS do
              local a = 1 + (i - 1) * 6
              redis.call('HINCRBY', KEYS[i], 's', ARGV[a + 1])
              redis.call('HINCRBY', KEYS[i], 'f', ARGV[a + 2])
              redis.call('HINCRBY', KEYS[i], 'r', ARGV[a + 3])
              redis.call('HINCRBY', KEYS[i], 'd', ARGV[a + 4])
              redis.call('HINCRBY', KEYS[i], 'n', ARGV[a + 5])
              local max = tonumber(redis.call('HGET', KEYS[i], 'm') or '0')
              if tonumber(ARGV[a + 6]) > max then redis.call('HSET', KEYS[i], 'm', ARGV[a + 6]) end
              redis.call('PEXPIRE', KEYS[i], ARGV[1])
            end
            return #KEYS
            """;

    /**
     * Reads minute buckets of the dashboard's activity. KEYS: the bucket of each minute. Returns,
     * per key, succeeded, failed, retried, deadLettered, runNanos, maxRunNanos (0 for an absent bucket).
     */
    static final String READ_ACTIVITY = """
            local out = {}
            for i = 1, #KEYS do
              local v = redis.call('HMGET', KEYS[i], 's', 'f', 'r', 'd', 'n', 'm')
              for j = 1, 6 do out[#out + 1] = v[j] or '0' end
            end
            return out
            """;

    /**
     * Every script, for loading them again on a server that lost its script cache: Redis does not
     * replicate the cache, so a promoted replica starts without any, and a script sent by SHA in a
     * pipeline then fails with NOSCRIPT (Redisson reloads only for scripts it runs on their own).
     */
    static final java.util.List<String> ALL = java.util.List.of(SETTLE, PENDING_OF, TRIM_ACKED, MOVE_DUE, RENEW_LEASES, RECLAIM,
            CLAIM_TICK, REPLAY, STATS, REMOVE_IDLE_CONSUMERS, ENQUEUE_TRACKED, SCHEDULE_TRACKED, START_JOBS, UPDATE_RUNNING_JOB,
            CANCEL_JOB, REQUEUE_JOB, FlowScripts.SUBMIT_UNIQUE, FlowScripts.RELEASE_UNIQUE, FlowScripts.SUBMIT_DEBOUNCED,
            FlowScripts.RESUME, ADMIT, ADD_ACTIVITY, READ_ACTIVITY, READ_TICK, SETTLE_XDEL, SETTLE_PER_ENTRY);
}
