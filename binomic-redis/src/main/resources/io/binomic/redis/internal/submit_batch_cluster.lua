-- Creates a batch ('new') or adds jobs to an open one ('add') on a Redis Cluster, where its jobs' queues
-- are in other slots than the batch: in one step in the batch's slot, the batch's hashes (lib.lua,
-- batch_fire) and each job as due (its delivery in the due hash, the batch in the due index), for
-- ClusterBatches to enqueue each once (batch_deliver.lua). Once this step is done every job will be
-- enqueued; if it fails none is.
-- The due hash: 'j:<job id>' or 'cb:KIND' to the delivery (JSON; '' once delivered), 'n' how many are not
-- delivered (undue.lua). KEYS: batch, batch jobs, due hash, due index. ARGV: mode, open ('1' or '0'), retention ms, created ms,
-- number of batch fields, fields (name, value)..., then per job: id, queue, delivery (JSON).
-- A job the batch lists already is skipped. Returns 1, or 0 when 'add' finds the batch closed or missing; an
-- error when 'new' finds it exists, unless it is this very submit's (flow_resent).
local batch, jobs, due, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if ARGV[1] == 'new' then
  if redis.call('EXISTS', batch) == 1 then
    if not flow_resent(batch, ARGV[4]) then return redis.error_reply('ERR batch exists already') end
  else
    redis.call('HSET', batch, 'open', ARGV[2], 'retention', ARGV[3], 'createdAt', ARGV[4], 'total', 0, 'ended', 0,
      'succeeded', 0, 'dead', 0, 'cancelled', 0)
    local n = tonumber(ARGV[5])
    for j = 6, 5 + n, 2 do redis.call('HSET', batch, ARGV[j], ARGV[j + 1]) end
    flow_count(batch, 'batch', 'open', true)
  end
elseif redis.call('HGET', batch, 'open') ~= '1' then
  return 0
end
local added = 0
for i = 6 + tonumber(ARGV[5]), #ARGV, 3 do
  -- a job the batch lists already came with a resend of an add whose reply was lost: due or counted
  -- again, it would be enqueued twice and leave the batch a job short of its total for ever
  if not redis.call('HGET', jobs, ARGV[i]) then
    redis.call('HSET', jobs, ARGV[i], 'P' .. ARGV[i + 1])
    redis.call('HSET', due, 'j:' .. ARGV[i], ARGV[i + 2])
    added = added + 1
  end
end
redis.call('HSET', batch, 'total', tonumber(redis.call('HGET', batch, 'total')) + added)
redis.call('HSET', due, 'n', tonumber(redis.call('HGET', due, 'n') or '0') + added)
if added > 0 then redis.call('ZADD', index, 'NX', string.format('%d', lim_now()), redis.call('HGET', batch, 'id')) end
return 1
