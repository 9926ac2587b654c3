-- How many members of a delayed set are parked: scored at least the parked score. With ZCARD and
-- ZRANGE only, the commands of the reader's ACL rule set (it has no ZCOUNT): a binary search by rank
-- for the first parked member, parked members having the highest scores. O(log^2 N); creates nothing.
-- KEYS: delayed set. ARGV: parked score. Returns the count.
local n = redis.call('ZCARD', KEYS[1])
local min = tonumber(ARGV[1])
local lo, hi = 0, n
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  local r = redis.call('ZRANGE', KEYS[1], mid, mid, 'WITHSCORES')
  if tonumber(r[2]) >= min then hi = mid else lo = mid + 1 end
end
return n - lo
