-- Stores a unique message unless its key is held, and takes the key, atomically; enqueue_unique.lua
-- takes the common case (an untracked message enqueued now at the default priority) with fewer arguments.
-- KEYS: unique key, stream (enqueue) or delayed set (schedule), job record.
-- ARGV: job id, ttl ms, 'E' | 'S', due ms, delayed member, tracked '1' | '0', task, enqueuedAt ms,
-- retention ms, record the key in the job record '1' | '0', stream fields...
-- Returns the id of the job holding the key (ARGV[1] when stored), nil when ARGV[1] holds it already (stored before).
-- The claim first (SET NX): a new key, the common case, then costs one call, not a GET and a SET
-- (each call from a script costs Redis about as much as a short command's whole round trip). Only
-- a held key is read. SET ... NX GET would read it in the same call but needs Redis 7.0.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local held = redis.call('GET', KEYS[1])
  if held == ARGV[1] then return false end
  return held
end
if ARGV[3] == 'E' then
  local stream = KEYS[2]
  for i = 11, #ARGV - 1, 2 do if ARGV[i] == 'priority' then stream = level_stream(KEYS[2], ARGV[i + 1]) end end
  redis.call('XADD', stream, '*', unpack(ARGV, 11))
else
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
end
if ARGV[6] == '1' then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[3], 'state', ARGV[3] == 'E' and 'QUEUED' or 'SCHEDULED', 'task', ARGV[7],
    'enqueuedAt', ARGV[8], 'retention', ARGV[9])
  if ARGV[3] == 'S' then redis.call('HSET', KEYS[3], 'due', ARGV[4]) end
  if ARGV[10] == '1' then redis.call('HSET', KEYS[3], 'uniqueKey', KEYS[1]) end
end
return ARGV[1]
