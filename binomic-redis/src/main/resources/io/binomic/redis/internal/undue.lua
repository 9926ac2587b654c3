-- Takes delivered entries off a batch's or a workflow's due hash on a Redis Cluster (ClusterBatches,
-- ClusterWorkflows): each is emptied (a delivered entry reads '') if it still holds what was delivered
-- (one rewritten meanwhile stays, to be delivered), 'n' counts those not delivered, and the hash is
-- deleted, and the batch or workflow taken off the due index, once it is 0: in one step, so an entry
-- recorded as due meanwhile keeps it indexed. HGET, HSET, DEL and ZREM only: the documented producer
-- rule set has them.
-- KEYS: due hash, due index. ARGV: batch or workflow id, then per delivered entry: field, the value delivered.
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
for i = 2, #ARGV, 2 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and v ~= '' and v == ARGV[i + 1] then
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
