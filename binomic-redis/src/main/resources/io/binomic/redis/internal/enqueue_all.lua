-- Enqueues a chunk of messages of one queue in one step, for a producer waiting for replicas:
-- one command cannot be split by a failover, so the WAIT after it confirms all of it or none (a
-- pipeline of one command per message could have its head taken by a primary about to be demoted
-- and its tail redirected, with the WAIT, to the new one). Each message as enqueue_tracked.lua or
-- enqueue_at_level.lua enqueues it: onto its level's stream, with its job record when tracked.
-- KEYS: the queue's default stream, then the job record of each tracked message, in order.
-- ARGV, per message: priority, task, enqueuedAt ms, retention ms ('' = not tracked), number of
-- stream field strings, stream fields...
local i, job, n = 1, 2, 0
while i <= #ARGV do
  local count = tonumber(ARGV[i + 4])
  redis.call('XADD', level_stream(KEYS[1], ARGV[i]), '*', unpack(ARGV, i + 5, i + 4 + count))
  if ARGV[i + 3] ~= '' then
    redis.call('DEL', KEYS[job])
    redis.call('HSET', KEYS[job], 'state', 'QUEUED', 'task', ARGV[i + 1], 'enqueuedAt', ARGV[i + 2], 'retention', ARGV[i + 3])
    job = job + 1
  end
  i = i + 5 + count
  n = n + 1
end
return n
