-- Marks the record of a job of a cancelled batch on a Redis Cluster cancel-requested unless it ended,
-- so that it does not start (start_jobs.lua); a record not written yet (its job still due) is created
-- with the mark, which its delivery keeps (batch_deliver.lua). KEYS: job record.
if is_final(redis.call('HGET', KEYS[1], 'state')) then return 0 end
redis.call('HSET', KEYS[1], 'cancelRequested', '1')
return 1
