-- Puts a tracked job replayed from the dead-letter queue back to QUEUED, keeping its history.
-- KEYS: job. ARGV: task, enqueuedAt ms, retention ms.
redis.call('HDEL', KEYS[1], 'endedAt', 'reason', 'due', 'cancelRequested', 'result')
redis.call('HSET', KEYS[1], 'state', 'QUEUED', 'task', ARGV[1], 'enqueuedAt', ARGV[2], 'retention', ARGV[3])
redis.call('PERSIST', KEYS[1])
return 1
