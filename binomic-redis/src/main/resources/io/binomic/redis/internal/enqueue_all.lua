-- Enqueues messages of one queue in one step, for a producer waiting for replicas: one command
-- cannot be split by a failover, so the WAIT after it confirms all of it or none (a pipeline of
-- one command per message could have its head taken by a primary about to be demoted and its tail
-- redirected, with the WAIT, to the new one). Each message as enqueue_tracked.lua or
-- enqueue_at_level.lua enqueues it: onto its level's stream, with its job record when tracked.
-- The producer sends the same call again, whole, when no replica confirmed it in time; a call
-- whose reply was late had run. Its marker, written with the entries and replicated with them,
-- makes a resend of a call that ran change nothing, and lapses after the producer's last resend.
-- A primary demoted after taking the call drops marker and entries alike, so the resend enqueues.
-- KEYS: the queue's default stream, the call's marker, then the job record of each tracked message,
-- in order. ARGV: the marker's time to live in ms, then per message: priority, task, enqueuedAt ms,
-- retention ms ('' = not tracked), number of stream field strings, stream fields...
-- Returns the number of messages enqueued: 0 for a resend of a call that ran.
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then
  return 0
end
local i, job, n = 2, 3, 0
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
