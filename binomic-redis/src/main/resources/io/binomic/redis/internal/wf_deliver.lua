-- Delivers the pending effect of a node of a workflow on a Redis Cluster (wf_effect in lib.lua), in its
-- queue's slot (ClusterWorkflows): its record brought to the state the workflow gave it, the job
-- enqueued once (its once-key set with the enqueue, so a resend or a sweep after a crash enqueues
-- nothing), cancel-requested, persisted or given its expiry. The record keeps the version of the
-- last effect applied ('wfv'): an older one delivered late changes nothing.
-- A held or released node whose record was cancelled by its own id (cancel_job.lua), or is gone (such
-- a cancel gave it its own retention), is neither held again nor enqueued: the delivery keeps X in
-- the queue's workflow outbox instead, which ends the node cancelled (wf_apply.lua), as a single node's
-- release does (wf_cancelled_by_id).
-- KEYS: the record, the queue's default stream, its delayed set, the once-key, the queue's workflow
-- outbox. ARGV: workflow id, effect (JSON), once-key expiry ms.
-- Returns 0 when an effect as new was applied already, 2 when it kept X, else 1.
local op = cjson.decode(ARGV[2])
local record, v = KEYS[1], tonumber(op['v'])
local r = redis.call('HMGET', record, 'wfv', 'state', 'cancelledById')
if r[1] and tonumber(r[1]) >= v then return 0 end
local st = op['st']
local now = string.format('%d', lim_now())
local function reset(state)
  redis.call('DEL', record)
  redis.call('HSET', record, 'state', state, 'task', op['t'], 'enqueuedAt', now, 'retention', op['rt'], 'workflow', ARGV[1])
end
if (st == 'W' or st == 'E') and not op['create'] and (not r[2] or r[3] == '1') then
  if not r[2] then
    redis.call('HSET', record, 'state', 'CANCELLED', 'task', op['t'], 'endedAt', now, 'retention', op['rt'], 'workflow', ARGV[1],
      'cancelledById', '1')
    redis.call('PEXPIRE', record, math.max(1, tonumber(op['rt'])))
  end
  local entry = ARGV[1] .. ' ' .. op['j'] .. ' X'
  if not redis.call('HGET', KEYS[5], entry) then redis.call('HSET', KEYS[5], entry, 'X') end
  redis.call('HSET', record, 'wfv', v)
  return 2
end
if op['create'] and not r[2] and st == 'C' then
  -- cancelled before the submit's delivery wrote the record (that process died between the two): written first
  reset('WAITING')
end
if st == 'E' then
  if redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[3]) then
    if op['due'] then
      redis.call('ZADD', KEYS[3], op['due'], op['m'])
      reset('SCHEDULED')
      redis.call('HSET', record, 'due', op['due'])
    else
      add_member_to_stream(KEYS[2], op['m'], now)
      reset('QUEUED')
    end
  end
elseif st == 'W' then
  reset('WAITING')
elseif st == 'C' and not is_final(r[2]) then
  redis.call('HSET', record, 'state', 'CANCELLED', 'endedAt', now)
  redis.call('PEXPIRE', record, op['rt'])
  redis.call('PUBLISH', string.sub(record, 1, #record - 40) .. 'jobs', 'E ' .. string.sub(record, -36))
end
-- a record gone by now (its own retention ran out) is not written again: a mark, an expiry or the
-- version alone would make a record of nothing, kept for ever
if redis.call('EXISTS', record) == 0 then return 1 end
if op['cr'] == '1' and not is_final(redis.call('HGET', record, 'state')) then
  redis.call('HSET', record, 'cancelRequested', '1')
end
if op['keep'] == 'P' then
  redis.call('PERSIST', record)
elseif op['keep'] then
  redis.call('PEXPIRE', record, op['keep'])
end
redis.call('HSET', record, 'wfv', v)
return 1
