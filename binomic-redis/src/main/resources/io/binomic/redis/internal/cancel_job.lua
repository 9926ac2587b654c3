-- Cancels a job. KEYS: job. ARGV: the CANCELLED update. Returns 0 not found, 1 already ended,
-- 2 cancel requested (running), 3 cancelled.
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
-- tells a workflow holding the job never to enqueue it (wf_cancelled_by_id in lib.lua)
redis.call('HSET', KEYS[1], 'cancelledById', '1')
release_unique_of_job(KEYS[1])
local retention = tonumber(redis.call('HGET', KEYS[1], 'retention') or '3600000')
redis.call('PEXPIRE', KEYS[1], math.max(1, retention))
return 3
