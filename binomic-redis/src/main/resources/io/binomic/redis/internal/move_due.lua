-- Moves due members of the delayed set onto the stream with a fresh enqueuedAt, and removes
-- them, in one atomic step. Due means by Redis' own clock (TIME), never a client's, so
-- a worker whose clock runs ahead cannot move messages early. A member that is not valid JSON
-- is still moved (as field 'raw'), so that it surfaces as a malformed delivery and is
-- dead-lettered, not lost. KEYS: delayed, stream. ARGV: max. Returns how many moved.
-- A message with a priority field goes to its level's stream (add_member_to_stream in lib.lua).
local t = redis.call('TIME')
local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, member in ipairs(due) do
  add_member_to_stream(KEYS[2], member, now)
  redis.call('ZREM', KEYS[1], member)
end
return #due
