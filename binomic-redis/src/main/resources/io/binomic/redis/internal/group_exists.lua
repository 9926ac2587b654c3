-- Whether a queue's consumer group exists: a worker has read the queue, whatever is left of it.
-- KEYS: stream. ARGV: group. Returns 1 or 0; creates nothing.
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) ~= 'table' or groups.err then return 0 end
for _, g in ipairs(groups) do
  for j = 1, #g, 2 do
    if g[j] == 'name' and g[j + 1] == ARGV[1] then return 1 end
  end
end
return 0
