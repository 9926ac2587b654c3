-- Records that the calling worker is alive, and deletes the consumers with nothing pending whose
-- worker has not said so for ARGV[2] ms. XINFO's idle alone cannot tell: Redis before 7.2 leaves it
-- running while a live worker waits in XREADGROUP BLOCK on an empty stream, so a queue idle for the
-- limit would lose every consumer of its live workers.
-- KEYS: stream, consumers-seen hash. ARGV: group, idle ms, the calling consumer.
-- Returns how many were removed.
local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[2], ARGV[3], now)
redis.call('PEXPIRE', KEYS[2], 3 * limit)
-- Back at once if a stall outlasted the limit and another worker removed it (0 when it exists).
redis.pcall('XGROUP', 'CREATECONSUMER', KEYS[1], ARGV[1], ARGV[3])
local cs = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(cs) ~= 'table' or cs.err then return 0 end
local n = 0
for _, c in ipairs(cs) do
  local name, pending, idle
  for j = 1, #c, 2 do
    if c[j] == 'name' then name = c[j + 1]
    elseif c[j] == 'pending' then pending = c[j + 1]
    elseif c[j] == 'idle' then idle = c[j + 1] end
  end
  if name and name ~= ARGV[3] and pending == 0 and idle and idle >= limit then
    local seen = tonumber(redis.call('HGET', KEYS[2], name))
    if not seen or now - seen >= limit then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
      redis.call('HDEL', KEYS[2], name)
      n = n + 1
    end
  end
end
return n
