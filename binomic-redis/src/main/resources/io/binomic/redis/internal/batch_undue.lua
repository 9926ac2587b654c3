-- Takes delivered entries off a batch's due hash on a Redis Cluster (ClusterBatches), and the batch off
-- the due index once nothing of it is due: in one step, so a callback recorded as due meanwhile keeps
-- the batch indexed. KEYS: due hash, due index. ARGV: batch id, delivered fields...
if #ARGV > 1 then redis.call('HDEL', KEYS[1], unpack(ARGV, 2)) end
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('ZREM', KEYS[2], ARGV[1]) end
return 1
