-- Counts of one queue. Ready is the group's lag (entries not yet delivered), not the stream's
-- length minus pending: acked entries stay in the stream until trim_acked.lua removes them.
-- Where Redis cannot tell the lag (an XDEL after the last delivered entry), the entries after the
-- last-delivered id are counted, up to 100,000. The lag is never trusted beyond the stream's
-- length, nor when no entry lies after the last-delivered id: Redis 7.0's read counter can drift
-- (a chaos run saw a lag of 92 on an empty stream whose every entry had been delivered, after
-- restarts from the append-only file), and ready messages that are not there look like a stuck queue.
-- KEYS: stream, delayed, dlq. ARGV: group.
-- Returns: ready, pending, delayed, dead letters, consumers.
local len = redis.call('XLEN', KEYS[1])
local ready, pending, consumers = len, 0, 0
local function after(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) == 'table' and not groups.err then
  for _, g in ipairs(groups) do
    local f = {}
    for j = 1, #g, 2 do f[g[j]] = g[j + 1] end
    if f['name'] == ARGV[1] then
      pending, consumers = f['pending'], f['consumers']
      local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
      if #last == 0 or not after(last[1][1], f['last-delivered-id']) then
        ready = 0
      elseif type(f['lag']) == 'number' then
        ready = math.min(f['lag'], len)
      else
        ready = #redis.call('XRANGE', KEYS[1], '(' .. f['last-delivered-id'], '+', 'COUNT', 100000)
      end
    end
  end
end
return {ready, pending, redis.call('ZCARD', KEYS[2]), redis.call('XLEN', KEYS[3]), consumers}
