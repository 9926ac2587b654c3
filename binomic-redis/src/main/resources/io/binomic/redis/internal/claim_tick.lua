-- Fires a periodic job's tick: claims it and enqueues its message in one step, so a claimed
-- tick always has its message. Judged by Redis' clock (TIME): a tick still in the future
-- is refused, so a client whose clock runs ahead neither fires early nor, by claiming a future
-- tick, blocks the ticks of the others; a tick whose superseded-at time has come (the client
-- passes the next tick) is refused too, so a tick held up by an outage or a pause does not fire
-- beside the one due by the time it arrives: the client fires that one instead. The claim
-- expires after the given lifetime. The XADD comes before the SET: if anything failed between
-- them, the worst is a tick fired twice, never a claim without its message.
-- A message with a priority field goes to its level's stream (level_stream in lib.lua).
-- KEYS: claim key, stream. ARGV: tick epoch ms, superseded-at epoch ms, claim lifetime ms, then
-- the message's field/value pairs without enqueuedAt (stamped here with Redis' time).
-- Returns {outcome, Redis time in epoch ms}: outcome 0 = not due, 1 = already fired, 2 = fired,
-- 3 = superseded.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tick = tonumber(ARGV[1])
if tick > now then return {0, now} end
local last = redis.call('GET', KEYS[1])
if last and tonumber(last) >= tick then return {1, now} end
if now >= tonumber(ARGV[2]) then return {3, now} end
local args = {KEYS[2], '*'}
for i = 4, #ARGV do args[#args + 1] = ARGV[i] end
for i = 4, #ARGV - 1, 2 do if ARGV[i] == 'priority' then args[1] = level_stream(KEYS[2], ARGV[i + 1]) end end
args[#args + 1] = 'enqueuedAt'
args[#args + 1] = string.format('%d', now)
redis.call('XADD', unpack(args))
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return {2, now}
