-- Enqueues a job or a callback of a batch on a Redis Cluster (ClusterBatches), in its queue's slot, once:
-- its once-key is set with the enqueue, and a later delivery of the same (a resend, a sweep after a
-- crash between this step and the due entry's removal) finds it and changes nothing.
-- KEYS: the queue's default stream, the once-key, the job's record (absent for an untracked callback).
-- ARGV: message (a delayed-set member), task, record retention ms, once-key expiry ms.
-- Returns 1 when enqueued, 0 when it was already.
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[4]) then return 0 end
local now = string.format('%d', lim_now())
add_member_to_stream(KEYS[1], ARGV[1], now)
if KEYS[3] then
  -- HSET without DEL: a batch cancel that came first marked the record cancel-requested, and that stays
  redis.call('HSET', KEYS[3], 'state', 'QUEUED', 'task', ARGV[2], 'enqueuedAt', now, 'retention', ARGV[3])
end
return 1
