-- One non-blocking read of all the levels of a queue, up to max entries in total: the levels in
-- use are read from the set, highest first, or (turn t > 0: PriorityFetchOrder) starting
-- at the (1 + (t - 1) mod (m - 1))-th of the m levels. A stream that lost its group (Redis
-- restarted empty) gets it again. The consumer is created on each stream, so an idle worker is
-- listed (Redis before 7.2 creates it only on a delivery). A level whose read fails (its key is
-- not a stream: WRONGTYPE) is skipped and named in the reply: a script that failed after reading
-- other levels would leave their entries pending to the consumer with no reply to deliver them.
-- KEYS: the queue's default stream. ARGV: group, consumer, max, turn.
-- Returns a list: the number of levels, the levels (highest first), the first failed read
-- ("<key>: <error>", or empty), then per level read: the level and the entries of its XREADGROUP
-- reply as they are (each {id, {fields...}}): handed through untouched, not flattened, which would
-- cost Lua a step per field of every entry.
local group, consumer = ARGV[1], ARGV[2]
local left, turn = tonumber(ARGV[3]), tonumber(ARGV[4])
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
for _, p in ipairs(order) do
  if left <= 0 then break end
  local key = KEYS[1]
  if p ~= DEFAULT_PRIORITY then key = KEYS[1] .. ':p' .. p end
  local ok = redis.pcall('XGROUP', 'CREATECONSUMER', key, group, consumer)
  if type(ok) == 'table' and ok.err then
    redis.pcall('XGROUP', 'CREATE', key, group, '0', 'MKSTREAM')
    redis.pcall('XGROUP', 'CREATECONSUMER', key, group, consumer)
  end
  local r = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', left, 'STREAMS', key, '>')
  if type(r) == 'table' and r.err then
    if out[problem] == '' then out[problem] = key .. ': ' .. r.err end
  elseif r then
    local entries = r[1][2]
    if #entries > 0 then
      out[#out + 1] = p
      out[#out + 1] = entries
      left = left - #entries
    end
  end
end
return out
