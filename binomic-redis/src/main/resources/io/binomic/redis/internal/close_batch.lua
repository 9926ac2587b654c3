-- Closes a batch ('close') or cancels it ('cancel': closed and marked cancelled); a closed batch
-- whose jobs all ended completes in this step (batch_complete_if_done in lib.lua).
-- A cancel marks every job not ended cancel-requested in the same step, so that none of them starts
-- from then on (start_jobs.lua ends such a job CANCELLED instead of running it); the caller then
-- cancels each, which interrupts the running ones. A batch that has ended is left as it is.
-- KEYS: batch, batch jobs. ARGV: 'close' | 'cancel', the key prefix (for the jobs' records, which a
-- script reaches on a single Redis node), and 'cluster' on a Redis Cluster, where they are in other
-- slots: there the caller marks them (ClusterBatches) after this step.
-- Returns {'none'} when there is no such batch; else 'ok' and, for a cancel, the jobs not ended: id, queue, ...
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none'} end
if ARGV[1] == 'cancel' and redis.call('HGET', KEYS[1], 'endedAt') then return {'ok'} end
redis.call('HSET', KEYS[1], 'open', '0')
if ARGV[1] == 'cancel' then redis.call('HSET', KEYS[1], 'cancelRequested', '1') end
batch_complete_if_done(KEYS[1], KEYS[2], string.format('%d', lim_now()))
local out = {'ok'}
if ARGV[1] == 'cancel' then
  local all = redis.call('HGETALL', KEYS[2])
  for j = 1, #all, 2 do
    if string.sub(all[j + 1], 1, 1) == 'P' then
      local queue = string.sub(all[j + 1], 2)
      out[#out + 1] = all[j]
      out[#out + 1] = queue
      local record = ARGV[2] .. ':{' .. queue .. '}:job:' .. all[j]
      if ARGV[3] ~= 'cluster' and not is_final(redis.call('HGET', record, 'state')) then
        redis.call('HSET', record, 'cancelRequested', '1')
      end
    end
  end
end
return out
