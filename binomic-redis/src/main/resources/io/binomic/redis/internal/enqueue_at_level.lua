-- Enqueues a message of a priority other than the default on its level's stream (creating
-- stream, group and level on first use), and for a tracked job creates its record, in one step.
-- KEYS: the queue's default stream, and the job record for a tracked job.
-- ARGV: priority, task, enqueuedAt ms, retention ms ('' = not tracked), stream fields...
redis.call('XADD', level_stream(KEYS[1], ARGV[1]), '*', unpack(ARGV, 5))
if ARGV[4] ~= '' then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], 'state', 'QUEUED', 'task', ARGV[2], 'enqueuedAt', ARGV[3], 'retention', ARGV[4])
end
return 1
