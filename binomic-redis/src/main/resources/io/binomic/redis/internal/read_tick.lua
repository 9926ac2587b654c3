-- Reads the last fired tick of a periodic job. KEYS: its claim. Returns {tick epoch ms}, or {} when none is kept.
local v = redis.call('GET', KEYS[1])
if v then return {v} end
return {}
