-- Schedules a debounced message, or replaces the one with its key still waiting in the delayed
-- set (its member is what the debounce key holds): the waiting job takes the new member's fields
-- and due time and keeps its id (and record, whose due time is updated). A job no longer in the
-- delayed set (due, running, ended) is not replaced: a new one is scheduled.
-- KEYS: debounce key, delayed set, job record of the new message.
-- ARGV: new id, due ms, new member, key ttl ms, tracked '1' | '0', task, enqueuedAt ms, retention ms,
-- prefix of job record keys. Returns the id of the job scheduled or replaced.
local old = redis.call('GET', KEYS[1])
if old and redis.call('ZSCORE', KEYS[2], old) then
  local ok, m = pcall(cjson.decode, old)
  local ok2, n = pcall(cjson.decode, ARGV[3])
  if ok and ok2 and type(m) == 'table' and type(n) == 'table' and m['id'] then
    n['id'] = m['id']
    local member = cjson.encode(n)
    redis.call('ZREM', KEYS[2], old)
    redis.call('ZADD', KEYS[2], ARGV[2], member)
    redis.call('SET', KEYS[1], member, 'PX', ARGV[4])
    local job = ARGV[9] .. m['id']
    if redis.call('EXISTS', job) == 1 then redis.call('HSET', job, 'due', ARGV[2]) end
    return m['id']
  end
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
if ARGV[5] == '1' then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[3], 'state', 'SCHEDULED', 'task', ARGV[6], 'enqueuedAt', ARGV[7], 'retention', ARGV[8],
    'due', ARGV[2])
end
return ARGV[1]
