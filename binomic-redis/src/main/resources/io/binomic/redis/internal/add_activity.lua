-- Adds one process's counts to minute buckets of the dashboard's activity (hashes, each
-- expiring ttl after its last write): HINCRBY of the counts, the longest run kept as a
-- maximum. KEYS: the bucket of each minute. ARGV: ttl ms, then per key: succeeded, failed,
-- retried, deadLettered, runNanos, maxRunNanos.
for i = 1, #KEYS do
  local a = 1 + (i - 1) * 6
  redis.call('HINCRBY', KEYS[i], 's', ARGV[a + 1])
  redis.call('HINCRBY', KEYS[i], 'f', ARGV[a + 2])
  redis.call('HINCRBY', KEYS[i], 'r', ARGV[a + 3])
  redis.call('HINCRBY', KEYS[i], 'd', ARGV[a + 4])
  redis.call('HINCRBY', KEYS[i], 'n', ARGV[a + 5])
  local max = tonumber(redis.call('HGET', KEYS[i], 'm') or '0')
  if tonumber(ARGV[a + 6]) > max then redis.call('HSET', KEYS[i], 'm', ARGV[a + 6]) end
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
end
return #KEYS
