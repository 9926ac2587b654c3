-- Takes delivered entries off a batch's due hash on a Redis Cluster (ClusterBatches): each is emptied
-- (a delivered entry reads ''), 'n' counts those not delivered, and the hash is deleted, and the batch
-- taken off the due index, once it is 0: in one step, so a callback recorded as due meanwhile keeps
-- the batch indexed. HGET, HSET, DEL and ZREM only: the documented producer rule set has them.
-- KEYS: due hash, due index. ARGV: batch id, delivered fields...
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and v ~= '' then
    redis.call('HSET', KEYS[1], ARGV[i], '')
    n = n - 1
  end
end
if n <= 0 then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], 'n', n)
end
return n
