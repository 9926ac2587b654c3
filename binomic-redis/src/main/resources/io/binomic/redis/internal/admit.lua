-- The flow-control decision on deliveries of one queue (FlowLimits.admit), each atomic with
-- its effect. KEYS: stream, delayed, held, the queue's limits hash, then the records of tracked jobs. ARGV: group,
-- consumer, slot-wait fallback ms, longest hold µs (0: the caller holds nothing), lead µs (how long
-- before its turn a message waiting for its rate limit comes back), the lowest and the highest of the
-- deliveries' ids, the number of limit sets, per set: its number of limits, then per limit: 'r' or
-- 'c', limit id, permits, interval µs, burst; then per delivery two arguments: its id, and its other
-- fields in one string, space-separated: delivery count, stored attempt, rate-admitted (1/0), turn (1/0),
-- tracked (1/0: its job record is the next key of KEYS after the last tracked delivery's), its limit
-- set (1-based). Deliveries share sets (a queue's limit is every delivery's), so a limit's arguments
-- come once per call, not once per delivery.
-- The queue's own limits (id 'q') are the ones stored in its limits hash (set_queue_limits.lua) when
-- the script runs: they replace whatever 'q' limits a set names, so a change decides on the next
-- delivery, whatever view of them the calling worker still has.
-- Each argument costs Redis a Lua string in ARGV (about 0.7k instructions under callgrind) and each
-- tonumber a strtod, so a delivery's fields come as one string, parsed once per distinct string
-- (those of a fetch are mostly alike), and a path reads only what it needs.
-- Returns the deliveries' codes as one string, a letter per delivery (R run, H run at its reserved
-- start, W waits for its rate limit, S waits for a slot, N not pending under this consumer), then per
-- H, W or S, in order, its due time (epoch µs, Redis' clock) and, for H, the wait until it (µs; '0'
-- otherwise).
local group, consumer, fallback = ARGV[1], ARGV[2], tonumber(ARGV[3]) * 1000
local max_hold, lead = tonumber(ARGV[4]), tonumber(ARGV[5])
local base = lim_base(KEYS[1])
local now = lim_now_us()
local now_ms = math.floor(now / 1000)
local function us(t) return string.format('%d', t) end
local function ms(t) return string.format('%d', math.ceil(t / 1000)) end
-- each rate limit's state, read once and written once per call: 't' the GCRA time of the starts
-- admitted (held ones at their reserved start), 'r' the next turn to hand out, 'w' when a message that
-- waited its turn was last admitted (or, while the first of a line is away, when it comes back), 'i' the interval 't' and 'r' were spaced with. When the limit's
-- interval is another (a task's limit changed in code), what lies ahead of now is respaced at the new
-- interval: the starts reserved and the turns handed out count the same, so the next start and the
-- next turn come at the new rate rather than after the old schedule has run out.
local rates = {}
local function rate_state(lid, interval)
  local s = rates[lid]
  if not s then
    local key = base .. 'rate:' .. lid
    local st = redis.call('HMGET', key, 'tu', 'ru', 'wu', 'iu')
    s = {key = key, interval = interval, t = tonumber(st[1] or now), r = tonumber(st[2] or 0), w = tonumber(st[3] or 0)}
    local was = tonumber(st[4] or interval)
    if was ~= interval and was > 0 then
      if s.t > now then s.t = now + math.ceil((s.t - now) * interval / was) end
      if s.r > now then s.r = now + math.ceil((s.r - now) * interval / was) end
      s.dirty = true
    end
    rates[lid] = s
  end
  return s
end
-- The checks every delivery needs are made for all of them at once (a call per delivery cost most
-- of the script's time when no limit binds): the fence and which ones hold an admission already.
local own = {}
local stored = redis.call('HMGET', KEYS[4], 'rate.permits', 'rate.periodMillis', 'rate.burst', 'concurrency', 'concurrency.unrecorded')
-- How many deliveries admitted without a record (see below) may still run: counted up as they are
-- admitted, and brought down to what the pending entries allow whenever the limit can bind, so it
-- never counts fewer than run. Absent: unknown (the limit was just set, and jobs may run that no
-- admission counted), so every pending entry may be one.
local unrecorded = tonumber(stored[5])
if stored[1] and stored[2] then
  -- RateLimit.intervalMicros: period / permits, rounded up
  local permits = tonumber(stored[1])
  own[#own + 1] = {kind = 'r', lid = 'q', permits = permits, burst = tonumber(stored[3] or '1'),
    interval = math.floor((tonumber(stored[2]) * 1000 + permits - 1) / permits)}
end
if stored[4] then own[#own + 1] = {kind = 'c', lid = 'q', permits = tonumber(stored[4])} end
local sets = {}
local i = 9
for _ = 1, tonumber(ARGV[8]) do
  local nl = tonumber(ARGV[i])
  local set = {unpack(own)}
  for j = 0, nl - 1 do
    local at = i + 1 + j * 5
    if ARGV[at + 1] ~= 'q' then
      set[#set + 1] = {kind = ARGV[at], lid = ARGV[at + 1], permits = tonumber(ARGV[at + 2]), interval = tonumber(ARGV[at + 3]),
        burst = tonumber(ARGV[at + 4])}
    end
  end
  sets[#sets + 1] = set
  i = i + 1 + nl * 5
end
-- a level stream's entries are members with its level (lim_member), worked out once here
local suffix = lim_member(KEYS[1], '')
-- a delivery's other fields, parsed once per distinct string
local parsed = {}
local function fields(text)
  local f = parsed[text]
  if f == nil then
    local count, attempt, rate_ok, turn, tracked, set = string.match(text, '^(%d+) (%S+) ([01]) ([01]) ([01]) (%d+)$')
    f = {count = tonumber(count), attempt = attempt, rate_ok = rate_ok == '1', turn = turn == '1', tracked = tracked == '1',
      set = tonumber(set)}
    parsed[text] = f
  end
  return f
end
-- the deliveries' ids, fields and job records (arrays, not a table per delivery: this script's own
-- work per delivery is most of what it costs when nothing binds)
local ids, fs, jks = {}, {}, {}
local n, last_key = 0, 4
for at = i, #ARGV - 1, 2 do
  n = n + 1
  ids[n] = ARGV[at]
  local text = ARGV[at + 1]
  local f = parsed[text] or fields(text)
  fs[n] = f
  if f.tracked then
    last_key = last_key + 1
    jks[n] = last_key
  else
    jks[n] = 0
  end
end
-- The fence: this consumer's delivery count of each entry pending under it, listed in one XPENDING
-- over the ids' range, as the caller names it (a fetch's entries are consecutive, so the range is
-- dense with them); an id the listing does not show (another consumer's, not pending, outside a
-- range named wrong, or past the listing's cut at twice the deliveries) gets the exact per-entry
-- XPENDING.
-- The listing comes in id order, as a fetch's deliveries mostly do: it is walked beside them, and
-- read into a table by id only once the two differ.
local listing, at, mine = {}, 1, nil
if n >= 2 then listing = redis.call('XPENDING', KEYS[1], group, ARGV[6], ARGV[7], 2 * n, consumer) end
local pend = {}
for k, id in ipairs(ids) do
  local count, c = fs[k].count, nil
  local e = listing[at]
  if mine == nil and e ~= nil and e[1] == id then
    c = e[4]
    at = at + 1
  else
    if mine == nil then
      mine = {}
      for j = 1, #listing do mine[listing[j][1]] = listing[j][4] end
    end
    c = mine[id]
  end
  if c ~= nil then
    pend[k] = c >= count
  else
    local p = redis.call('XPENDING', KEYS[1], group, id, id, 1)
    pend[k] = #p == 1 and p[1][2] == consumer and tonumber(p[1][4]) >= count
  end
end
-- The entries pending in the queue's group, over all its streams (read once, before this call acks
-- any). Every admitted delivery is pending until it is settled, so no more run at once than are pending.
local pending_total = nil
local function queue_pending()
  if pending_total == nil then
    local streams = {base .. 'stream'}
    for _, level in ipairs(redis.call('SMEMBERS', base .. 'stream:levels')) do streams[#streams + 1] = base .. 'stream:p' .. level end
    pending_total = 0
    for _, key in ipairs(streams) do
      local p = redis.pcall('XPENDING', key, group) -- no group yet: nothing pending there
      if type(p) == 'table' and p[1] then pending_total = pending_total + tonumber(p[1]) end
    end
  end
  return pending_total
end
-- A set that cannot bind is admitted without a record (no holder, no slot): one with no limit, or
-- whose only limit is the queue's concurrency limit while no more entries are pending than it allows
-- (all of them running would not exceed it). Recording a holder and a slot per delivery, and freeing
-- them at settle, cost most of a limited drain's Redis time. Those admitted so are counted whenever
-- the limit can bind: slots_taken('q') counts every pending entry but this call's own (see below).
local fast = {}
for k, set in ipairs(sets) do
  local q, other = nil, false
  for _, l in ipairs(set) do
    if l.kind == 'c' and l.lid == 'q' then q = l else other = true end
  end
  if not other and (q == nil or queue_pending() <= q.permits) then fast[k] = true end
end
local all_fast = true
for k = 1, #sets do
  if not fast[k] then all_fast = false break end
end
if not all_fast then
  all_fast = true
  for k = 1, n do
    if not fast[fs[k].set] then all_fast = false break end
  end
end
if all_fast then
  -- nothing can bind: each delivery still pending under this consumer runs now
  local codes, admitted = {}, 0
  for k = 1, n do
    if pend[k] then
      local jk = jks[k]
      if jk > 0 then redis.call('HDEL', KEYS[jk], 'waiting') end
      codes[k] = 'R'
      admitted = admitted + 1
    else
      codes[k] = 'N'
    end
  end
  if stored[4] and unrecorded and admitted > 0 then redis.call('HINCRBY', KEYS[4], 'concurrency.unrecorded', admitted) end
  return {table.concat(codes)}
end
local ds = {}
for k, id in ipairs(ids) do
  local f = fs[k]
  ds[k] = {id = id, f = f, jk = jks[k], member = suffix == '' and id or id .. suffix, pending = pend[k], fast = fast[f.set] == true}
end
local members = {}
for _, d in ipairs(ds) do
  if not d.fast then members[#members + 1] = d.member end
end
local holding = {}
lim_chunked({'HMGET', KEYS[3]}, members, function(r, at)
  for j = 1, #r do if r[j] then holding[members[at + j - 1]] = true end end
end)
-- this call's own deliveries still to be decided on a recorded slot: pending, but not running; and
-- those it admits without a record, counted with the others so admitted
local own_waiting, counted, fast_admitted = 0, {}, 0
for _, d in ipairs(ds) do
  if not d.fast and d.pending and not holding[d.member] and not counted[d.member] then
    counted[d.member] = true
    own_waiting = own_waiting + 1
  elseif d.fast and d.pending then
    fast_admitted = fast_admitted + 1
  end
end
if unrecorded then unrecorded = unrecorded + fast_admitted end
local unrecorded_was = unrecorded
-- per concurrency limit: its slots taken (read once, counted here as this call takes more), and the
-- slots and holders this call adds (written at the end, one ZADD per limit and one HSET)
local taken, adds, add_order, holders = {}, {}, {}, {}
-- per concurrency limit: how many wait in its line (read when a delivery first joins it, counted here as more do),
-- and its permits, for those this call looked at
local line_length, seen_permits = {}, {}
local function slots_taken(lid)
  if taken[lid] == nil then
    taken[lid] = redis.call('ZCARD', base .. 'slots:' .. lid)
    -- the queue's limit: deliveries admitted without a record run too, all of them pending but not
    -- holding a slot, and not this call's own still to be decided; so at most that many of them run.
    -- The pending entries alone would also count those other workers fetched and have not yet had
    -- decided, as if running: with several workers fetching a backlog, the limit then looked full
    -- while its slots were free, and parked the jobs that should have taken them.
    if lid == 'q' then
      local bound = math.max(0, queue_pending() - own_waiting - taken[lid])
      if unrecorded == nil or unrecorded > bound then unrecorded = bound end
      taken[lid] = taken[lid] + unrecorded
    end
  end
  return taken[lid]
end
-- read before the loop acks any of this call's entries, which own_waiting counts
if stored[4] then queue_pending() end
local codes, out = {}, {''}
for k, d in ipairs(ds) do
  local f = d.f
  local id, attempt, rate_ok, turn, jk = d.id, f.attempt, f.rate_ok, f.turn, d.jk
  local set = sets[f.set]
  local code, due = 'R', now
  if not d.pending then
    code = 'N'
  elseif d.fast then
    if jk > 0 then redis.call('HDEL', KEYS[jk], 'waiting') end
  elseif not holding[d.member] then
    -- A free slot goes to the delivery that finds it, even while messages wait in the line: the one
    -- a release moved back is at the end of the stream, and keeping the slot for it would leave the
    -- slot idle while the workers read the backlog ahead of it. It finds the slot taken and waits again,
    -- ahead of the waiters parked after it, so the line still serves by priority, then age.
    local wait_lid, wait_permits, conc = nil, 0, {}
    for _, l in ipairs(set) do
      if l.kind == 'c' then
        seen_permits[l.lid] = l.permits
        if slots_taken(l.lid) >= l.permits then
          wait_lid, wait_permits = l.lid, l.permits
          break
        end
        conc[#conc + 1] = l.lid
      end
    end
    if wait_lid then
      -- The safety fallback brings a waiter back in case no release does (slots lost with a failed-over
      -- primary, a limit raised while nothing ran, a limit removed from the task's code, a worker without
      -- the limit running the waiter a release moved back). Each round of releases serves about one
      -- limit's worth of the line, so a waiter further back gets as many fallbacks, up to 6 (a minute):
      -- a backlog of thousands no longer comes back every 10 s only to wait again, while the head of the
      -- line, which restarts a stuck one, keeps the short one, and no waiter of a limit that is gone
      -- waits more than a minute.
      local ahead = 0
      if not turn then
        if line_length[wait_lid] == nil then line_length[wait_lid] = redis.call('ZCARD', base .. 'wait:' .. wait_lid) end
        ahead = line_length[wait_lid]
        line_length[wait_lid] = ahead + 1
      end
      code, due = 'S', now + fallback * math.min(1 + math.floor(ahead / math.max(1, wait_permits)), 6)
    else
      -- rate limits, GCRA on the admitted starts (strict: at most one start per interval, plus the burst),
      -- and the waiting line. A message that waited its turn starts when a start is allowed; a new one also
      -- needs the line to be empty, or stuck (no waiting message admitted for two intervals, e.g. while they
      -- are behind a backlog on the stream), so it never takes the turn of one that is coming. A start the
      -- limit allows within the longest hold is reserved (the limit's time moves past it) and held by the caller
      local conform, line, can_jump, sts = now, now, true, {}
      for _, l in ipairs(set) do
        if l.kind == 'r' then
          local interval = l.interval
          local s = rate_state(l.lid, interval)
          sts[#sts + 1] = s
          -- tolerance: the burst, plus one interval of jitter (a start a little late must not cost the next one its turn)
          conform = math.max(conform, s.t - l.burst * interval)
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
        elseif rate_ok then
          -- its turn came, but the starts up to it went to others (one given back and admitted again, a
          -- new one that jumped a stuck line): it waits for the next start, not behind the line it had left
          code, due = 'W', conform
        else
          code, due = 'W', math.max(conform, line)
        end
        for _, s in ipairs(sts) do
          if code == 'W' then
            if not rate_ok then
              -- the first to wait in an empty line comes back at due - lead: the line is not stuck before
              if s.r <= now then s.w = math.max(s.w, due - lead) end
              s.r = due + s.interval
            end
          else
            s.t = math.max(s.t, due) + s.interval
            if rate_ok then s.w = math.max(s.w, now) end
          end
          s.dirty = true
        end
      end
    end
    if code == 'R' or code == 'H' then
      local member = d.member
      for _, lid in ipairs(conc) do
        if not adds[lid] then adds[lid] = {}; add_order[#add_order + 1] = lid end
        adds[lid][#adds[lid] + 1] = now_ms
        adds[lid][#adds[lid] + 1] = member
        taken[lid] = taken[lid] + 1
      end
      holders[#holders + 1] = member
      holders[#holders + 1] = #conc == 1 and conc[1] or table.concat(conc, ' ')
      holding[member] = true -- the same entry twice in one call is admitted once
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
          -- the line for a slot: higher priority first, then oldest first (1e13 ms is over 300 years); one
          -- whose turn came but found the slot taken goes ahead of those parked since (1e12 ms earlier)
          local p = tonumber(m['priority'] or '5') or 5
          local since = turn and now_ms - 1000000000000 or now_ms
          redis.call('ZADD', base .. 'wait:' .. wait_lid, string.format('%d', (9 - p) * 10000000000000 + since), member)
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
  codes[k] = code
  if code ~= 'R' and code ~= 'N' then
    out[#out + 1] = us(due)
    out[#out + 1] = code == 'H' and us(due - now) or '0'
  end
end
out[1] = table.concat(codes)
-- Slots still free after this call while messages wait for one (a limit raised, slots freed by no
-- release): as many of the line's head go back now, not at their fallback. One already on its way
-- back finds its slot taken and waits again, at the front.
for lid, permits in pairs(seen_permits) do
  local spare = permits - slots_taken(lid)
  if spare > 0 and redis.call('EXISTS', base .. 'wait:' .. lid) == 1 then
    for _ = 1, spare do
      if not lim_promote(KEYS[1], lid, now_ms) then break end
    end
  end
end
if unrecorded ~= unrecorded_was then redis.call('HSET', KEYS[4], 'concurrency.unrecorded', unrecorded)
elseif fast_admitted > 0 and unrecorded then redis.call('HINCRBY', KEYS[4], 'concurrency.unrecorded', fast_admitted) end
for _, lid in ipairs(add_order) do lim_chunked({'ZADD', base .. 'slots:' .. lid}, adds[lid]) end
lim_chunked({'HSET', KEYS[3]}, holders)
for _, s in pairs(rates) do
  if s.dirty then
    redis.call('HSET', s.key, 'tu', us(s.t), 'ru', us(s.r), 'wu', us(s.w), 'iu', us(s.interval))
    -- kept while a start or a turn it handed out is ahead, and a little after: then it is idle, and goes
    redis.call('PEXPIRE', s.key, math.floor((math.max(1, math.max(s.t, s.r) - now) + 2 * s.interval) / 1000) + 250)
  end
end
return out
