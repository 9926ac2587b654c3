-- Which levels of a queue a fetch reads, in order: the levels in use are read from the set,
-- highest first, or (turn t > 0: PriorityFetchOrder) starting at the (1 + (t - 1) mod (m - 1))-th
-- of the m levels, and of those the ones holding entries the group has not handed out yet (the
-- stream's newest entry is past the group's last delivered id). The caller then reads them with
-- plain XREADGROUPs, in that order, until it has what it asked for: entries passed through a script
-- cost Redis about as much again as the read itself (each field a Lua string and back). A stream
-- that lost its group (Redis restarted empty) gets it again. The consumer is created on each
-- stream, so an idle worker is listed (Redis before 7.2 creates it only on a delivery). A level
-- whose key is not a stream (WRONGTYPE) is skipped and named in the reply.
-- KEYS: the queue's default stream. ARGV: group, consumer, turn.
-- Returns a flat list: the number of levels, the levels (highest first), the first failed level
-- ("<key>: <error>", or empty), then the levels to read, in order.
local group, consumer = ARGV[1], ARGV[2]
local turn = tonumber(ARGV[3])
local levels = {DEFAULT_PRIORITY}
for _, p in ipairs(redis.call('SMEMBERS', KEYS[1] .. ':levels')) do
  if string.match(p, '^[0-9]$') and tonumber(p) ~= DEFAULT_PRIORITY then levels[#levels + 1] = tonumber(p) end
end
table.sort(levels, function(a, b) return a > b end)
local m = #levels
local order = levels
if turn > 0 and m >= 2 then
  order = {}
  local start = 1 + ((turn - 1) % (m - 1))
  for i = 0, m - 1 do order[i + 1] = levels[((start + i) % m) + 1] end
end
local out = {m}
for _, p in ipairs(levels) do out[#out + 1] = p end
out[#out + 1] = ''
local problem = #out
-- a is a later entry id than b
local function later(a, b)
  local ma, sa = string.match(a, '^(%d+)-(%d+)$')
  local mb, sb = string.match(b, '^(%d+)-(%d+)$')
  if #ma ~= #mb then return #ma > #mb end
  if ma ~= mb then return ma > mb end
  return tonumber(sa) > tonumber(sb)
end
for _, p in ipairs(order) do
  local key = KEYS[1]
  if p ~= DEFAULT_PRIORITY then key = KEYS[1] .. ':p' .. p end
  local ok = redis.pcall('XGROUP', 'CREATECONSUMER', key, group, consumer)
  if type(ok) == 'table' and ok.err then
    redis.pcall('XGROUP', 'CREATE', key, group, '0', 'MKSTREAM')
    redis.pcall('XGROUP', 'CREATECONSUMER', key, group, consumer)
  end
  local newest = redis.pcall('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if type(newest) == 'table' and newest.err then
    if out[problem] == '' then out[problem] = key .. ': ' .. newest.err end
  elseif #newest == 1 then
    local delivered = nil
    local groups = redis.pcall('XINFO', 'GROUPS', key)
    if type(groups) == 'table' and not groups.err then
      for _, g in ipairs(groups) do
        local fields = {}
        for j = 1, #g - 1, 2 do fields[g[j]] = g[j + 1] end
        if fields['name'] == group then delivered = fields['last-delivered-id'] end
      end
    end
    -- no group listed (its creation was refused): read anyway, and let the read say why
    if delivered == nil or later(newest[1][1], delivered) then out[#out + 1] = p end
  end
end
return out
