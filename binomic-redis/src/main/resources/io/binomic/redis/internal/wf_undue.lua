-- Takes delivered effects off a workflow's due hash on a Redis Cluster (ClusterWorkflows): each is
-- emptied (a delivered entry reads '') if it still holds what was delivered (a newer effect merged in
-- meanwhile stays, to be delivered), 'n' counts those not delivered, and the hash is deleted, and the
-- workflow taken off the due index, once it is 0: in one step. HGET, HSET, DEL and ZREM only, as
-- batch_undue.lua.
-- KEYS: due hash, due index. ARGV: workflow id, then per delivered effect: field, the effect delivered.
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
