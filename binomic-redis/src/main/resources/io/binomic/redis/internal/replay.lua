-- Moves dead letters back onto the stream with attempt 1, a fresh enqueuedAt and the
-- replayedFrom header, deleting each from the DLQ in the same step. Entries without a
-- decodable message (stored as 'raw') are left where they are.
-- A message with a priority field goes to its level's stream (level_stream in lib.lua).
-- KEYS: dlq, stream. ARGV: now epoch ms, dead-letter ids... Returns how many replayed.
local n = 0
for i = 2, #ARGV do
  local r = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])
  if #r == 1 then
    local f = {}
    local kv = r[1][2]
    for j = 1, #kv, 2 do f[kv[j]] = kv[j + 1] end
    local ok, h = pcall(cjson.decode, f['headers'] or '{"codec":"json-jdk"}')
    if ok and type(h) == 'table' and f['id'] and f['task'] and f['queue'] and (f['payload'] or f['payload64']) then
      h['replayedFrom'] = ARGV[i]
      local args = {level_stream(KEYS[2], f['priority']), '*', 'id', f['id'], 'task', f['task'], 'queue', f['queue'],
                    'attempt', '1', 'enqueuedAt', ARGV[1]}
      if f['priority'] then args[#args + 1] = 'priority'; args[#args + 1] = f['priority'] end
      if f['payload'] then
        args[#args + 1] = 'payload'
        args[#args + 1] = f['payload']
      else
        args[#args + 1] = 'payload64'
        args[#args + 1] = f['payload64']
      end
      args[#args + 1] = 'headers'
      args[#args + 1] = cjson.encode(h)
      redis.call('XADD', unpack(args))
      redis.call('XDEL', KEYS[1], ARGV[i])
      n = n + 1
    end
  end
end
return n
