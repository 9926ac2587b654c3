-- Takes a stopping worker off a queue level's consumers, unless it holds entries pending there:
-- XGROUP DELCONSUMER drops a consumer's pending entries, which must stay for reclaim. The group stays.
-- KEYS: stream, consumers-seen hash. ARGV: group, consumer.
-- Returns 1 when removed, 0 when it holds something or is not there.
local cs = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(cs) ~= 'table' or cs.err then return 0 end
for _, c in ipairs(cs) do
  local name, pending
  for j = 1, #c, 2 do
    if c[j] == 'name' then name = c[j + 1]
    elseif c[j] == 'pending' then pending = c[j + 1] end
  end
  if name == ARGV[2] then
    if pending ~= 0 then return 0 end
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
    redis.call('HDEL', KEYS[2], ARGV[2])
    return 1
  end
end
return 0
