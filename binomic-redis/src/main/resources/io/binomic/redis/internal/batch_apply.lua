-- Applies the final outcome of a job of a batch on a Redis Cluster, taken from its queue's outbox
-- (settle.lua's 'O'), to the batch, in the batch's slot: batch_settled (lib.lua) counts a job once, by
-- its id, so applying an outcome again (a sweep, two forwarders) changes nothing. A callback it fires
-- is recorded as due (batch_fire).
-- KEYS: batch, batch jobs, batch's due hash. ARGV: job id, outcome (S, D or C).
-- Returns 1 when the batch has something due (ClusterBatches then enqueues it), else 0.
if redis.call('EXISTS', KEYS[1]) == 1 then batch_settled(KEYS[1], KEYS[2], ARGV[1], ARGV[2]) end
return redis.call('EXISTS', KEYS[3])
