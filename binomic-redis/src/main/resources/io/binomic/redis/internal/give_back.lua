-- Gives back what a blocking read over a queue's levels handed out beyond the fetch's max (its
-- COUNT is per stream, and a fetch with fewer free slots than levels waits on every level): each
-- entry still pending to this consumer is acked, deleted and added again at the end of its stream,
-- its fields unchanged, for the next read to hand out. Those entries arrived while the read began,
-- so they were at the end of their stream already. One that is no longer pending to the consumer
-- is left alone.
-- KEYS: a level's stream. ARGV: group, consumer, entry ids. Returns how many went back.
local group, consumer = ARGV[1], ARGV[2]
local n = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  if #redis.call('XPENDING', KEYS[1], group, id, id, 1, consumer) == 1 then
    local r = redis.call('XRANGE', KEYS[1], id, id)
    redis.call('XACK', KEYS[1], group, id)
    redis.call('XDEL', KEYS[1], id)
    if #r == 1 then
      redis.call('XADD', KEYS[1], '*', unpack(r[1][2]))
      n = n + 1
    end
  end
end
return n
