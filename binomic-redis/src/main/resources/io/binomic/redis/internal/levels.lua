-- The levels of a queue in use: the members of its set of levels. With ARGV[1] = '1' it first
-- adds any level whose stream exists and is missing from the set: a set deleted (the fix its
-- WRONGTYPE error names) or lost would otherwise hide those streams' messages from every fetch,
-- reclaim and stats until a message of the same level was submitted again.
-- KEYS: the queue's default stream. ARGV: '1' to look for level streams, or '0'.
local set = KEYS[1] .. ':levels'
if ARGV[1] == '1' then
  for p = 0, 9 do
    if p ~= DEFAULT_PRIORITY and redis.call('EXISTS', KEYS[1] .. ':p' .. p) == 1 then redis.call('SADD', set, tostring(p)) end
  end
end
return redis.call('SMEMBERS', set)
