-- Reads minute buckets of the dashboard's activity. KEYS: the bucket of each minute. Returns,
-- per key, succeeded, failed, retried, deadLettered, runNanos, maxRunNanos (0 for an absent bucket).
local out = {}
for i = 1, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 's', 'f', 'r', 'd', 'n', 'm')
  for j = 1, 6 do out[#out + 1] = v[j] or '0' end
end
return out
