-- One step of making due now every message of a queue's delayed set that a rate limit pushed back
-- (its headers carry 'limit.rate'), after the queue's limits changed: the new ones decide on it.
-- A step scans about ARGV[2] of the set's members from the cursor ARGV[1] (ZSCAN returns every
-- member present from the first step to the last, whatever scores change meanwhile), so a set of
-- any size is done in steps that each hold Redis briefly. Parked messages of a paused task (scores
-- from 8e15) keep theirs. KEYS: the queue's delayed set. Returns the next cursor, '0' when done.
local now = lim_now()
local reply = redis.call('ZSCAN', KEYS[1], ARGV[1], 'MATCH', '*limit.rate*', 'COUNT', tonumber(ARGV[2]))
local found = reply[2]
for i = 1, #found, 2 do
  local score = tonumber(found[i + 1])
  if score > now and score < 8000000000000000 then
    redis.call('ZADD', KEYS[1], 'XX', now, found[i])
  end
end
return reply[1]
