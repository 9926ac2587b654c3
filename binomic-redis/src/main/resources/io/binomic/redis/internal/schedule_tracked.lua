-- Schedules a tracked message and creates its record, atomically.
-- KEYS: delayed set, job. ARGV: task, enqueuedAt ms, retention ms, due ms, member.
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[5])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'state', 'SCHEDULED', 'task', ARGV[1], 'enqueuedAt', ARGV[2], 'retention', ARGV[3],
    'due', ARGV[4])
return 1
