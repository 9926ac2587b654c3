-- XAUTOCLAIM following the cursor until max entries, then reads each claimed entry's delivery
-- count from the PEL (XAUTOCLAIM has just incremented it). Entries deleted from the stream are
-- dropped from the PEL by XAUTOCLAIM itself and skipped here. The scan starts where the last
-- call stopped and wraps around once, and it is capped at 100 XAUTOCLAIM calls, so a huge PEL
-- of healthy entries never blocks Redis for long.
-- KEYS: stream. ARGV: group, consumer, min idle ms, max, start cursor.
-- Returns a flat list: the next cursor, then per entry: id, delivery count, number of field strings, fields...
local max = tonumber(ARGV[4])
local out = {''}
local n = 0
local cursor = ARGV[5]
local wrapped = cursor == '0-0'
local calls = 0
while n < max and calls < 100 do
  local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], cursor, 'COUNT', max - n)
  calls = calls + 1
  cursor = r[1]
  for _, gone in ipairs(r[3] or {}) do lim_release(KEYS[1], gone) end -- deleted while pending: free its slots
  for _, e in ipairs(r[2]) do
    if type(e) == 'table' and type(e[2]) == 'table' then
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
      local count = 1
      if #p == 1 then count = p[1][4] end
      out[#out + 1] = e[1]
      out[#out + 1] = tostring(count)
      out[#out + 1] = tostring(#e[2])
      for _, f in ipairs(e[2]) do out[#out + 1] = f end
      n = n + 1
    end
  end
  if cursor == '0-0' then
    if wrapped then break end
    wrapped = true
  end
end
out[1] = cursor
return out
