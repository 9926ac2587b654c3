-- submit_unique.lua's common case: enqueues an untracked message of the default priority unless its
-- unique key is held, and takes the key, atomically. Only the arguments that case needs: Redis turns
-- every argument into a Lua string in a table it grows as it goes (about as much work again as the
-- XADD's own), so the other case's ten fixed arguments and third key cost more than the claim itself.
-- KEYS: unique key, stream.
-- ARGV: ttl ms, the stream fields, the first of them 'id' (so ARGV[3] is the job id).
-- Returns the job id when stored, the holder's id when another job holds the key, nil when this one
-- holds it already (stored before).
if not redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[1]) then
  local held = redis.call('GET', KEYS[1])
  if held == ARGV[3] then return false end
  return held
end
redis.call('XADD', KEYS[2], '*', unpack(ARGV, 2))
return ARGV[3]
