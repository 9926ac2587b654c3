-- Resumes a queue ('*') or a task: removes it from the paused set, then makes due now (by
-- Redis' clock) the parked messages of the delayed set (score at least the parked score) that
-- nothing paused holds any more, up to ARGV[4] from offset ARGV[3].
-- KEYS: paused set, delayed set. ARGV: member ('' to remove none: unpark only), parked score, offset, max.
-- Returns {moved, scanned}.
redis.call('SREM', KEYS[1], ARGV[1])
if redis.call('SISMEMBER', KEYS[1], '*') == 1 then return {0, 0} end
local t = redis.call('TIME')
local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local parked = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[2], '+inf', 'LIMIT', tonumber(ARGV[3]), tonumber(ARGV[4]))
local moved = 0
for _, member in ipairs(parked) do
  local ok, m = pcall(cjson.decode, member)
  local task = ok and type(m) == 'table' and m['task'] or nil
  if not task or redis.call('SISMEMBER', KEYS[1], task) == 0 then
    redis.call('ZADD', KEYS[2], now, member)
    moved = moved + 1
  end
end
return {moved, #parked}
