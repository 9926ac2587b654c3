-- The entries pending under one consumer, with their delivery counts and fields, unchanged.
-- KEYS: stream. ARGV: group, consumer, max. Returns per entry: id, delivery count, number of
-- field strings, fields... (an entry deleted from the stream is skipped).
local out = {}
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[3]), ARGV[2])
for _, e in ipairs(p) do
  local r = redis.call('XRANGE', KEYS[1], e[1], e[1])
  if #r == 1 then
    out[#out + 1] = e[1]
    out[#out + 1] = tostring(e[4])
    out[#out + 1] = tostring(#r[1][2])
    for _, f in ipairs(r[1][2]) do out[#out + 1] = f end
  end
end
return out
