-- submit_unique.lua's common case: enqueues an untracked message of the default priority whose entry
-- has exactly the fields below, unless its unique key is held, and takes the key, atomically. Only
-- the values travel: Redis reads each argument from the request, then makes it a Lua string in a
-- table it grows as it fills it (about 0.85k instructions an argument under callgrind), while the
-- field names written here are strings of the script's own, made once when the script loads.
-- KEYS: unique key, stream.
-- ARGV: ttl ms, then the values of the fields id, task, queue, attempt, enqueuedAt, payload, headers
-- (StreamFields.encode's names and order; the entry written is the same as XADD of its fields).
-- Returns the job id when stored, the holder's id when another job holds the key, nil when this one
-- holds it already (stored before).
local a = ARGV
if not redis.call('SET', KEYS[1], a[2], 'NX', 'PX', a[1]) then
  local held = redis.call('GET', KEYS[1])
  if held == a[2] then return false end
  return held
end
redis.call('XADD', KEYS[2], '*', 'id', a[2], 'task', a[3], 'queue', a[4], 'attempt', a[5],
  'enqueuedAt', a[6], 'payload', a[7], 'headers', a[8])
return a[2]
