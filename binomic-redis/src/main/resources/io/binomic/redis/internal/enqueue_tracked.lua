-- Enqueues a tracked message and creates its record, atomically (a worker that fetched it at
-- once must find the record, not have its RUNNING overwritten by a late QUEUED).
-- KEYS: stream, job. ARGV: task, enqueuedAt ms, retention ms, stream fields...
redis.call('XADD', KEYS[1], '*', unpack(ARGV, 4))
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'state', 'QUEUED', 'task', ARGV[1], 'enqueuedAt', ARGV[2], 'retention', ARGV[3])
return 1
