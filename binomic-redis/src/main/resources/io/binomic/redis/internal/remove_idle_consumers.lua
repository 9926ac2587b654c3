-- Deletes consumers with nothing pending that were idle at least ARGV[2] ms.
-- KEYS: stream. ARGV: group, idle ms. Returns how many were removed.
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
  if name and pending == 0 and idle and idle >= tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
    n = n + 1
  end
end
return n
