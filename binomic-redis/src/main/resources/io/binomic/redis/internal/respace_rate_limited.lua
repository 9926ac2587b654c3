-- One step of making due now every message of a queue's delayed set that a rate limit pushed back
-- (its headers carry 'limit.rate'), after the queue's limits changed: the new ones decide on it.
-- A step reads up to ARGV[3] members in score order from the cursor (ARGV[1], a score, and ARGV[2],
-- how many members at that score an earlier step left where they were), so a set of any size is
-- done in steps that each hold Redis briefly, with the commands the documented ACL rule sets grant.
-- A member made due leaves the range (its score is now), and what is due already is skipped.
-- Parked messages of a paused task (scores from 8e15) keep theirs. KEYS: the queue's delayed set.
-- Returns {done (1 or 0), the next cursor's score, its count}.
local now = lim_now()
local from, skip = tonumber(ARGV[1]), tonumber(ARGV[2])
if from <= now then from, skip = now + 1, 0 end
local count = tonumber(ARGV[3])
local found = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('%d', from), '(8000000000000000', 'WITHSCORES', 'LIMIT', skip, count)
local last, left = from, skip
for i = 1, #found, 2 do
  local score = tonumber(found[i + 1])
  if score ~= last then last, left = score, 0 end
  if string.find(found[i], 'limit.rate', 1, true) then
    redis.call('ZADD', KEYS[1], 'XX', string.format('%d', now), found[i])
  else
    left = left + 1
  end
end
return {#found / 2 < count and 1 or 0, string.format('%d', last), left}
