-- Closes a batch ('close') or cancels it ('cancel': closed and marked cancelled); a closed batch
-- whose jobs all ended completes in this step (batch_complete_if_done in lib.lua).
-- KEYS: batch, batch jobs. ARGV: 'close' | 'cancel'.
-- Returns {'none'} when there is no such batch; else 'ok' and, for a cancel, the jobs not ended: id, queue, ...
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none'} end
redis.call('HSET', KEYS[1], 'open', '0')
if ARGV[1] == 'cancel' then redis.call('HSET', KEYS[1], 'cancelRequested', '1') end
batch_complete_if_done(KEYS[1], KEYS[2], string.format('%d', lim_now()))
local out = {'ok'}
if ARGV[1] == 'cancel' then
  local all = redis.call('HGETALL', KEYS[2])
  for j = 1, #all, 2 do
    if string.sub(all[j + 1], 1, 1) == 'P' then
      out[#out + 1] = all[j]
      out[#out + 1] = string.sub(all[j + 1], 2)
    end
  end
end
return out
