-- Cancels a workflow: marks it cancelled (nothing is released from then), ends each held or skipped
-- node CANCELLED with its record, and marks the record of each enqueued node cancel-requested, so
-- that it does not start (start_jobs.lua ends such a job CANCELLED); the caller then cancels each,
-- which interrupts the running ones. A workflow with no node held or enqueued is left as it is.
-- KEYS: workflow. Returns {'none'} when there is no such workflow; else 'ok' and the enqueued
-- nodes' jobs: id, queue, ...
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none'} end
local out = {'ok'}
if tonumber(redis.call('HGET', KEYS[1], 'active')) == 0 then return out end
redis.call('HSET', KEYS[1], 'cancelRequested', '1')
local now = string.format('%d', lim_now())
wf_witness(KEYS[1])
for _, name in ipairs(cjson.decode(redis.call('HGET', KEYS[1], 'names'))) do
  local s = redis.call('HGET', KEYS[1], 's:' .. name)
  local record = redis.call('HGET', KEYS[1], 'rk:' .. name)
  if s == 'E' then
    out[#out + 1] = redis.call('HGET', KEYS[1], 'j:' .. name)
    out[#out + 1] = redis.call('HGET', KEYS[1], 'q:' .. name)
    if wf_remote then
      -- on a Cluster the record is in another slot: its delivery marks it unless it ended (wf_deliver.lua)
      wf_effect(KEYS[1], name, {cr = '1'}, now)
    elseif not is_final(redis.call('HGET', record, 'state')) then
      redis.call('HSET', record, 'cancelRequested', '1')
    end
  elseif s == 'W' or s == 'K' then
    wf_cancel_record(KEYS[1], name, record, now)
    wf_set(KEYS[1], name, 'C', now)
  end
end
return out
