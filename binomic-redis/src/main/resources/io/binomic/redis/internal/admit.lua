-- The flow-control decision on deliveries of one queue (FlowLimits.admit), each atomic with
-- its effect. KEYS: stream, delayed, held, then the records of tracked jobs. ARGV: group,
-- consumer, slot-wait fallback ms, longest hold µs (0: the caller holds nothing), lead µs (how long
-- before its turn a message waiting for its rate limit comes back), then per delivery: id,
-- delivery count, stored attempt, rate-admitted (1/0), turn (1/0), index of its job record in KEYS
-- (0: none), number of limits, then per limit: 'r' or 'c', limit id, permits, interval µs, burst.
-- Returns per delivery a code (R run, H run at its reserved start, W waits for its rate limit, S
-- waits for a slot, N not pending under this consumer), the due time (epoch µs, Redis' clock) and,
-- for H, the wait until it (µs).
local group, consumer, fallback = ARGV[1], ARGV[2], tonumber(ARGV[3]) * 1000
local max_hold, lead = tonumber(ARGV[4]), tonumber(ARGV[5])
local base = lim_base(KEYS[1])
local now = lim_now_us()
local now_ms = math.floor(now / 1000)
local function us(t) return string.format('%d', t) end
local function ms(t) return string.format('%d', math.ceil(t / 1000)) end
-- each rate limit's state, read once and written once per call: 't' the GCRA time of the starts
-- admitted (held ones at their reserved start), 'r' the next turn to hand out, 'w' when a message that
-- waited its turn was last admitted
local rates = {}
local function rate_state(lid, interval)
  local s = rates[lid]
  if not s then
    local key = base .. 'rate:' .. lid
    local st = redis.call('HMGET', key, 'tu', 'ru', 'wu')
    s = {key = key, interval = interval, t = tonumber(st[1] or now), r = tonumber(st[2] or 0), w = tonumber(st[3] or 0)}
    rates[lid] = s
  end
  return s
end
local out = {}
local i = 6
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
              lim_move_now(KEYS[1], head[1], now_ms)
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
      -- rate limits, GCRA on the admitted starts (strict: at most one start per interval, plus the burst),
      -- and the waiting line. A message that waited its turn starts when a start is allowed; a new one also
      -- needs the line to be empty, or stuck (no waiting message admitted for two intervals, e.g. while they
      -- are behind a backlog on the stream), so it never takes the turn of one that is coming. A start the
      -- limit allows within the longest hold is reserved (the limit's time moves past it) and held by the caller
      local conform, line, can_jump, sts = now, now, true, {}
      for j = 0, nl - 1 do
        local at = lim + j * 5
        if ARGV[at] == 'r' then
          local interval = tonumber(ARGV[at + 3])
          local s = rate_state(ARGV[at + 1], interval)
          sts[#sts + 1] = s
          -- tolerance: the burst, plus one interval of jitter (a start a little late must not cost the next one its turn)
          conform = math.max(conform, s.t - tonumber(ARGV[at + 4]) * interval)
          line = math.max(line, s.r)
          if s.r > now and now - s.w <= math.max(2 * interval, 250000) then can_jump = false end
        end
      end
      if #sts > 0 then
        local eligible = rate_ok or can_jump
        if eligible and conform <= now then
          code = 'R'
        elseif eligible and conform - now <= max_hold then
          code, due = 'H', conform
        else
          code, due = 'W', math.max(conform, line)
        end
        for _, s in ipairs(sts) do
          if code == 'W' then
            s.r = due + s.interval
          else
            s.t = math.max(s.t, due) + s.interval
            if rate_ok then s.w = now end
          end
          s.dirty = true
        end
      end
    end
    if code == 'R' or code == 'H' then
      local member = lim_member(KEYS[1], id)
      for _, lid in ipairs(conc) do redis.call('ZADD', base .. 'slots:' .. lid, now_ms, member) end
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
        -- back a little before its turn when the caller holds: it is then held, not late
        redis.call('ZADD', KEYS[2], ms(code == 'W' and math.max(now, due - lead) or due), member)
        if code == 'S' then
          -- the line for a slot: higher priority first, then oldest first (1e13 ms is over 300 years)
          local p = tonumber(m['priority'] or '5') or 5
          redis.call('ZADD', base .. 'wait:' .. wait_lid, string.format('%d', (9 - p) * 10000000000000 + now_ms), member)
        end
        if jk > 0 then
          local state = redis.call('HGET', KEYS[jk], 'state')
          if state and state ~= 'SUCCEEDED' and state ~= 'DEAD_LETTERED' and state ~= 'CANCELLED' then
            redis.call('HSET', KEYS[jk], 'state', 'SCHEDULED', 'due', ms(due),
              'waiting', code == 'W' and 'rate limit' or 'concurrency limit')
          end
        end
      else
        code = 'N'
      end
    end
  end
  out[#out + 1] = code
  out[#out + 1] = us(due)
  out[#out + 1] = us(code == 'H' and due - now or 0)
end
for _, s in pairs(rates) do
  if s.dirty then
    redis.call('HSET', s.key, 'tu', us(s.t), 'ru', us(s.r), 'wu', us(s.w))
    -- kept while a start or a turn it handed out is ahead, and a little after: then it is idle, and goes
    redis.call('PEXPIRE', s.key, math.floor((math.max(1, math.max(s.t, s.r) - now) + 2 * s.interval) / 1000) + 250)
  end
end
return out
