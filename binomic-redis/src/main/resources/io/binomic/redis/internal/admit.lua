-- The flow-control decision on deliveries of one queue (FlowLimits.admit), each atomic with
-- its effect. KEYS: stream, delayed, held, then the records of tracked jobs. ARGV: group,
-- consumer, slot-wait fallback ms, then per delivery: id, delivery count, stored attempt,
-- rate-admitted (1/0), turn (1/0), index of its job record in KEYS (0: none), number of limits,
-- then per limit: 'r' or 'c', limit id, permits, interval ms, burst. Returns per delivery a code
-- (R run, W waits for its rate limit, S waits for a slot, N not pending under this consumer) and
-- the due time (epoch ms, Redis' clock).
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
