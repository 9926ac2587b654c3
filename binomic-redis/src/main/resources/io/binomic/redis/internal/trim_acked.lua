-- Removes acknowledged entries from the front of the stream: everything older than both the
-- group's oldest pending entry and its last-delivered id has been delivered and acked, so
-- XTRIM MINID below that bound removes only finished work (never an undelivered or
-- unacked entry). Approximate (~): whole stream nodes go, which is what makes it far
-- cheaper than an XDEL per entry. At most 100,000 entries per call (with ~ and no LIMIT,
-- Redis stops at 10,000, which falls behind a fast drain trimmed a few times a second); skipped
-- when the stream has any group but ours.
-- KEYS: stream. ARGV: group. Returns how many entries were removed.
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) ~= 'table' or groups.err or #groups ~= 1 then return 0 end
local name, last
for j = 1, #groups[1], 2 do
  if groups[1][j] == 'name' then name = groups[1][j + 1]
  elseif groups[1][j] == 'last-delivered-id' then last = groups[1][j + 1] end
end
if name ~= ARGV[1] or not last or last == '0-0' then return 0 end
-- the bound: the entry after the last-delivered one, or the oldest pending entry if that is older
-- (it always is, unless XGROUP SETID moved the group back: then entries after it are undelivered again)
local dash = string.find(last, '-', 1, true)
local lms, lseq = tonumber(string.sub(last, 1, dash - 1)), tonumber(string.sub(last, dash + 1))
local bound = string.sub(last, 1, dash - 1) .. '-' .. string.format('%d', lseq + 1)
local p = redis.call('XPENDING', KEYS[1], ARGV[1])
if tonumber(p[1]) > 0 then
  local pdash = string.find(p[2], '-', 1, true)
  local pms, pseq = tonumber(string.sub(p[2], 1, pdash - 1)), tonumber(string.sub(p[2], pdash + 1))
  if pms < lms or (pms == lms and pseq <= lseq) then bound = p[2] end
end
return redis.call('XTRIM', KEYS[1], 'MINID', '~', bound, 'LIMIT', 100000)
