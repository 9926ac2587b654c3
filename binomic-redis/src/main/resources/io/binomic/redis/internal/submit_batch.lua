-- Creates a batch ('new') or adds jobs to an open one ('add'), and enqueues its jobs with their
-- records, in one step: all or none. The batch's hashes are described in lib.lua (batch_fire).
-- KEYS: batch, batch jobs, then per job: its queue's default stream, its record.
-- ARGV: mode, open ('1' or '0'), retention ms, created ms, number of callback fields, callback
-- fields (name, value)..., then per job: id, queue, priority, task, record retention ms, number of
-- stream field strings, stream fields...
-- A job the batch lists already is skipped. Returns 1, or 0 when 'add' finds the batch closed or missing;
-- an error when 'new' finds it exists, unless it is this very submit's (flow_resent).
local mode = ARGV[1]
local fresh, listed = false, {}
if mode == 'new' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    if not flow_resent(KEYS[1], ARGV[4]) then return redis.error_reply('ERR batch exists already') end
  else
    redis.call('HSET', KEYS[1], 'open', ARGV[2], 'retention', ARGV[3], 'createdAt', ARGV[4], 'total', 0, 'ended', 0,
      'succeeded', 0, 'dead', 0, 'cancelled', 0)
    local n = tonumber(ARGV[5])
    for j = 6, 5 + n, 2 do redis.call('HSET', KEYS[1], ARGV[j], ARGV[j + 1]) end
    flow_count(KEYS[1], 'batch', 'open', true)
    -- a batch this call creates lists only the jobs this call adds: whether a job is listed already
    -- is then asked of a table here, not of the jobs' hash with an HGET per job
    fresh = redis.call('EXISTS', KEYS[2]) == 0
  end
elseif redis.call('HGET', KEYS[1], 'open') ~= '1' then
  return 0
end
local now = string.format('%d', lim_now())
-- the id in the batch key's braces: each job's record names its batch, for the dashboard's job page
local batch_id = string.sub(KEYS[1], -37, -2)
local i = 6 + tonumber(ARGV[5])
local k = 3
local added = 0
while i <= #ARGV do
  local id, queue, priority, task, retention, n = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], tonumber(ARGV[i + 5])
  -- A job the batch lists already came with a resend of an add whose reply was lost: enqueuing or
  -- counting it again would leave the batch a job short of its total for ever.
  local known
  if fresh then known = listed[id] else known = redis.call('HGET', KEYS[2], id) end
  if not known then
    listed[id] = true
    local args = {level_stream(KEYS[k], priority), '*'}
    for j = i + 6, i + 5 + n do args[#args + 1] = ARGV[j] end
    redis.call('XADD', unpack(args))
    redis.call('DEL', KEYS[k + 1])
    redis.call('HSET', KEYS[k + 1], 'state', 'QUEUED', 'task', task, 'enqueuedAt', now, 'retention', retention, 'batch', batch_id)
    redis.call('HSET', KEYS[2], id, 'P' .. queue)
    added = added + 1
  end
  i = i + 6 + n
  k = k + 2
end
redis.call('HSET', KEYS[1], 'total', tonumber(redis.call('HGET', KEYS[1], 'total')) + added)
return 1
