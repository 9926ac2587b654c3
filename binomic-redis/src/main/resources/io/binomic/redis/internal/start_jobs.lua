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
for k = 1, #KEYS do
  local key = KEYS[k]
  local state = redis.call('HGET', key, 'state')
  if is_final(state) then
    out[#out + 1] = k
    at = skip_job(at)
  elseif redis.call('HGET', key, 'cancelRequested') == '1' then
    -- cancelled while an earlier attempt ran on a worker that stopped: it ends here, not run again
    if state == 'RUNNING' then record_abandoned(key) end
    redis.call('HSET', key, 'state', 'CANCELLED', 'endedAt', now)
    redis.call('PEXPIRE', key, math.max(1, tonumber(redis.call('HGET', key, 'retention') or '3600000')))
    local ns = tonumber(ARGV[at])
    local nd = tonumber(ARGV[at + 1 + ns])
    redis.call('PUBLISH', ARGV[at + 2 + ns + nd + 1], 'E ' .. string.sub(key, -36))
    out[#out + 1] = k
    at = skip_job(at)
  else
    if state == 'RUNNING' then record_abandoned(key) end
    at = apply_job(key, at)
  end
end
return out
