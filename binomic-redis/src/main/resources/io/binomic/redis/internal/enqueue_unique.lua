-- submit_unique.lua's common case: enqueues an untracked message of the default priority unless its
-- unique key is held, and takes the key, atomically. Only the arguments that case needs: Redis reads
-- each argument, then makes it a Lua string in a table it grows as it fills it (about 1.1k
-- instructions an argument under callgrind), so the ten arguments and the key that only delayed or
-- tracked jobs use cost Redis about twice what the SET of the claim does.
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
