-- Replaces a queue's limits (DEL, then HSET of what is set) and releases what the old ones held
-- back, so the new ones decide on it: the messages waiting for one of the queue's slots go back to
-- their streams, and the queue's rate state starts afresh. Those a rate limit pushed back are made
-- due by respace_rate_limited.lua, called after this in steps. KEYS: limits hash, the queue's
-- default stream. ARGV: the hash's fields and values.
redis.call('DEL', KEYS[1])
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
local base = lim_base(KEYS[2])
local now = lim_now()
local wkey = base .. 'wait:q'
local waiting = redis.call('ZRANGE', wkey, 0, -1)
redis.call('DEL', wkey)
for _, w in ipairs(waiting) do lim_move_now(KEYS[2], w, now) end
redis.call('DEL', base .. 'rate:q')
return #waiting
