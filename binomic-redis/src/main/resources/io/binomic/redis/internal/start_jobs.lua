-- Marks jobs started unless their record says they ended or were cancelled.
-- KEYS: job records of one queue. ARGV: one job update per key. Returns the (1-based) positions not started.
local out, at = {}, 1
local t = redis.call('TIME')
local now = tostring(t[1] * 1000 + math.floor(t[2] / 1000))
-- the attempt that was running never ended: its worker stopped, and it was reclaimed
local function record_abandoned(key)
  local attempt = redis.call('HGET', key, 'attempt')
  if attempt and redis.call('HEXISTS', key, 'a.' .. attempt) == 0 then
    redis.call('HSET', key, 'a.' .. attempt, (redis.call('HGET', key, 'worker') or '') .. '\t'
      .. (redis.call('HGET', key, 'startedAt') or now) .. '\t' .. now .. '\tabandoned\t'
      .. 'its worker stopped before it ended; the job was reclaimed')
  end
end
-- apply_job with the record read already: the update's deletions that name a field the record
-- lacks are left out, and no HDEL is run when none is left (a first start deletes nothing). A
-- field the update both sets and deletes is deleted, as apply_job does.
local function start_job(key, at, read)
  local ns = tonumber(ARGV[at])
  local j = at + 1 + ns
  local nd = tonumber(ARGV[j])
  local set, gone = {}, {}
  for s = at + 1, at + ns, 2 do set[ARGV[s]] = true end
  for d = 1, nd do
    if read[2 + d] or set[ARGV[j + d]] then gone[#gone + 1] = ARGV[j + d] end
  end
  if ns > 0 then redis.call('HSET', key, unpack(ARGV, at + 1, at + ns)) end
  if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
  j = j + 1 + nd
  local ttl = tonumber(ARGV[j])
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
  if ARGV[j + 2] ~= '' then redis.call('PUBLISH', ARGV[j + 1], ARGV[j + 2]) end
  return j + 3
end
for k = 1, #KEYS do
  local key = KEYS[k]
  -- one read per job: its state, its cancel mark and the fields its update deletes
  local ns = tonumber(ARGV[at])
  local nd = tonumber(ARGV[at + 1 + ns])
  local read = redis.call('HMGET', key, 'state', 'cancelRequested', unpack(ARGV, at + 2 + ns, at + 1 + ns + nd))
  local state = read[1] or nil
  if is_final(state) then
    out[#out + 1] = k
    at = skip_job(at)
  elseif read[2] == '1' then
    -- cancelled while an earlier attempt ran on a worker that stopped: it ends here, not run again
    if state == 'RUNNING' then record_abandoned(key) end
    redis.call('HSET', key, 'state', 'CANCELLED', 'endedAt', now)
    redis.call('PEXPIRE', key, math.max(1, tonumber(redis.call('HGET', key, 'retention') or '3600000')))
    redis.call('PUBLISH', ARGV[at + 2 + ns + nd + 1], 'E ' .. string.sub(key, -36))
    out[#out + 1] = k
    at = skip_job(at)
  else
    if state == 'RUNNING' then record_abandoned(key) end
    at = start_job(key, at, read)
  end
end
return out
