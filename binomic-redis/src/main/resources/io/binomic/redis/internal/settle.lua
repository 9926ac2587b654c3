-- Settles deliveries of one queue, each fenced: it is applied only if the entry is still
-- pending and owned by this consumer, with a delivery count at least the one the settling
-- worker was handed (a consumer that reclaimed an entry it still held settles it either way).
-- Otherwise it is a no-op. An ack is an XACK (no XDEL: acknowledged entries are trimmed in bulk
-- by trim_acked.lua); a retry is the XACK and a ZADD onto the delayed set; a dead letter is
-- the XACK and an XADD to the dead-letter stream, bounded by count (approximately) and by age (MINID).
--
-- The fence reads owner and count with one XPENDING start end count consumer per run of
-- FENCE_RUN entries (the caller sends them in id order: RedisSettle.BY_ENTRY_ID), which lists
-- this consumer's pending entries in the run's id range: on a settle batch that is dense in the
-- consumer's pending entries it costs less than half of an XPENDING id id 1 per entry, whose
-- call overhead dominates. An entry not in the listing (owned by another consumer, not pending,
-- or past a listing cut at twice the run) gets the exact per-entry XPENDING, which also says
-- which of the two it is; once a listing is cut the batch is sparse, and the rest of it goes per
-- entry, so a sparse batch costs about what a per-entry fence costs.
-- KEYS: stream, delayed, dlq. ARGV: group, consumer, dlq max count, dlq min id, then per
-- settlement: id (an ack of a first delivery) | 'A', id, count | 'R', id, count, due epoch ms,
-- member | 'D', id, count, n, n field strings;
-- a tracked job's settlement is followed by 'J', index of its record in KEYS, and its update
-- (apply_job in lib.lua), applied only when the settlement is; a unique job's by 'U', index of
-- its key in KEYS, job id; a job of a batch's final one by 'B', index of the batch's key in KEYS (its
-- jobs' key next), job id, outcome (S, D, C: batch_settled in lib.lua); a job of a workflow's by 'W', index of
-- the workflow's key in KEYS, job id, outcome (wf_settled in lib.lua); on a Cluster, a job of a batch's final
-- one by 'O', index of the queue's batch outbox in KEYS, '<batch id> <job id>', outcome (ClusterBatches), and a job
-- of a workflow's by 'O', index of the queue's workflow outbox, '<workflow id> <job id> <outcome>', outcome (ClusterWorkflows); and,
-- anywhere, 'H', n: hand this consumer up to n new deliveries onto the slots of the queue's own
-- concurrency limit its applied settlements freed (hand_off below). Returns the 1-based positions of the
-- settlements not applied: positive when the entry is pending under another consumer, negative when it
-- is not pending at all; then each delivery handed, as a list: id, then its fields and values.

-- Entries per fence listing: one XPENDING call per run, its overhead spread over the run.
local FENCE_RUN = 64
-- A lone settlement is fenced alone: a listing of one entry saves nothing.
local FENCE_MIN = 2

local group, consumer = ARGV[1], ARGV[2]
-- XPENDING of a stream that lost its group (Redis restarted without its data, the stream deleted)
-- lists nothing: the entries are gone with it, so their settlements apply to nothing, instead of
-- an error that the worker would retry and then give up on as if the entries were still there.
local function xpending(...)
  local p = redis.pcall('XPENDING', KEYS[1], group, ...)
  if type(p) == 'table' and p.err then
    if string.find(p.err, 'NOGROUP', 1, true) then return {} end
    error(p)
  end
  return p
end
-- the settlements' ids, in order (markers are one character, an entry id is longer)
local ids = {}
local hand = 0
local i = 5
while i <= #ARGV do
  local a = ARGV[i]
  if #a > 1 then ids[#ids + 1] = a i = i + 1
  elseif a == 'U' then i = i + 3
  elseif a == 'H' then hand = tonumber(ARGV[i + 1]) i = i + 2
  elseif a == 'B' or a == 'W' or a == 'O' then i = i + 4
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
  local p = xpending(ids[from], ids[to], cut, consumer)
  for j = 1, #p do mine[p[j][1]] = tonumber(p[j][4]) end
  if #p >= cut then listing = false end
  from = to + 1
end
local skipped, acks, seen, released = {}, {}, {}, {}
local n, owned = 0, false
i = 5
while i <= #ARGV do
  local kind = ARGV[i]
  if kind == 'H' then
    i = i + 2
  elseif kind == 'B' then
    -- a job of a batch: its final outcome counted in the batch with the settlement just before, only with it
    if owned then batch_settled(KEYS[tonumber(ARGV[i + 1])], KEYS[tonumber(ARGV[i + 1]) + 1], ARGV[i + 2], ARGV[i + 3]) end
    i = i + 4
  elseif kind == 'O' then
    -- a job of a batch or workflow on a Cluster (in another slot): its final outcome kept in this queue's
    -- outbox with the settlement, the first one only; ClusterBatches applies it to the batch, by job id,
    -- ClusterWorkflows to the workflow
    -- (HGET and HSET rather than HSETNX: the commands of the documented worker rule set)
    if owned and not redis.call('HGET', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2]) then
      redis.call('HSET', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3])
    end
    i = i + 4
  elseif kind == 'W' then
    -- a job of a workflow: its final outcome recorded, and the jobs it releases enqueued, only with the settlement just before
    if owned then wf_settled(KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3]) end
    i = i + 4
  elseif kind == 'U' then
    -- a unique job's key, given back with the ack or dead letter just before: only with it (release_unique in lib.lua)
    if owned then release_unique(KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2]) end
    i = i + 3
  elseif kind == 'J' then
    -- the job record update of the settlement just before: applied only with it
    if owned then i = apply_job(KEYS[tonumber(ARGV[i + 1])], i + 2, true) else i = skip_job(i + 2) end
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
      local p = xpending(id, id, 1)
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
  if owned then released[#released + 1] = id end
  end
end
lim_release_all(KEYS[1], released) -- frees the concurrency slots of those that hold any (lib.lua)
for from = 1, #acks, 1000 do
  redis.call('XACK', KEYS[1], group, unpack(acks, from, math.min(#acks, from + 999)))
end
-- The hand-off: a slot of the queue's own concurrency limit that these settlements freed goes to the
-- next entry of the stream, read here for this consumer and admitted onto it (a slot recorded, as
-- admit.lua records one), so that the slot is taken again within this round trip, not after a fetch and
-- an admission of their own. The worker asks for it only while the queue's limit binds and its jobs
-- carry no limit but that one (a task's or a key's limit is decided by admit.lua alone); the queue's
-- default stream only (priority levels are read in order by the fetch), and no rate limit of the queue.
-- Counted as admit.lua counts: the recorded slots, and those admitted without a record (at most the
-- pending entries that hold no slot), so that the limit is never exceeded.
local function hand_off(stream, n)
  local base = lim_base(stream)
  if stream ~= base .. 'stream' or redis.call('EXISTS', base .. 'stream:levels') == 1 then return end
  local st = redis.call('HMGET', base .. 'limits', 'concurrency', 'rate.permits', 'concurrency.unrecorded')
  local permits = tonumber(st[1])
  if permits == nil or st[2] then return end
  local slots = base .. 'slots:q'
  local taken = redis.call('ZCARD', slots)
  local p = redis.pcall('XPENDING', stream, group)
  local pending = (type(p) == 'table' and p[1]) and tonumber(p[1]) or 0
  local unrecorded = math.max(0, pending - taken)
  if st[3] and tonumber(st[3]) < unrecorded then unrecorded = tonumber(st[3]) end
  local spare = math.min(n, permits - taken - unrecorded)
  if spare <= 0 then return end
  local r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', spare, 'STREAMS', stream, '>')
  if not r or not r[1] then return end
  local now_ms = string.format('%d', lim_now())
  local adds, holders = {}, {}
  for _, e in ipairs(r[1][2]) do
    adds[#adds + 1] = now_ms
    adds[#adds + 1] = e[1]
    holders[#holders + 1] = e[1]
    holders[#holders + 1] = 'q'
    local entry = {e[1]}
    for j = 1, #e[2] do
      entry[#entry + 1] = e[2][j]
      -- a tracked job that waited in the line runs now: its record no longer says what it waits for
      if j % 2 == 1 and e[2][j] == 'id' then redis.call('HDEL', base .. 'job:' .. e[2][j + 1], 'waiting') end
    end
    skipped[#skipped + 1] = entry
  end
  if #adds > 0 then
    redis.call('ZADD', slots, unpack(adds))
    redis.call('HSET', base .. 'held', unpack(holders))
  end
end
if hand > 0 and #released > 0 then hand_off(KEYS[1], math.min(hand, #released)) end
return skipped
