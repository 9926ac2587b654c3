-- Resets the idle time of entries still owned by the consumer (at least at the delivery count it holds)
-- (XCLAIM ... JUSTID keeps the delivery count). An entry another consumer has reclaimed
-- meanwhile is left alone, so a worker that was frozen does not steal it back.
-- KEYS: stream. ARGV: group, consumer, then id, delivery count pairs. Returns the ids not renewed
-- (no longer pending, or pending under another consumer): the worker stops running those.
local lost = {}
for i = 3, #ARGV, 2 do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if #p == 1 and p[1][2] == ARGV[2] and tonumber(p[1][4]) >= tonumber(ARGV[i + 1]) then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
