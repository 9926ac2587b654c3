-- Creates a workflow, the record of each of its jobs (QUEUED for a root, WAITING for the others),
-- and enqueues its roots, in one step. The workflow's hash is described in lib.lua (wf_set).
-- KEYS: workflow, then per node: its queue's default stream, its record.
-- ARGV: retention ms, created ms, then per node: name, job id, queue, task, record retention ms,
-- dependencies (JSON array), those whose failure it ignores (JSON array), dependents (JSON array),
-- message (a delayed-set member).
-- Returns 1; an error when the workflow exists already.
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('ERR workflow exists already') end
local now = string.format('%d', lim_now())
local names = {}
local active = 0
local k = 2
for i = 3, #ARGV, 9 do
  local name, id, queue, task, retention = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local root = #cjson.decode(ARGV[i + 5]) == 0
  names[#names + 1] = name
  redis.call('HSET', KEYS[1], 's:' .. name, root and 'E' or 'W', 'j:' .. name, id, 'q:' .. name, queue, 't:' .. name, task,
    'st:' .. name, KEYS[k], 'rk:' .. name, KEYS[k + 1], 'rt:' .. name, retention, 'd:' .. name, ARGV[i + 5],
    'o:' .. name, ARGV[i + 6], 'r:' .. name, ARGV[i + 7], 'm:' .. name, ARGV[i + 8], 'job:' .. id, name)
  if root then add_member_to_stream(KEYS[k], ARGV[i + 8], now) end
  redis.call('DEL', KEYS[k + 1])
  redis.call('HSET', KEYS[k + 1], 'state', root and 'QUEUED' or 'WAITING', 'task', task, 'enqueuedAt', now, 'retention', retention)
  active = active + 1
  k = k + 2
end
redis.call('HSET', KEYS[1], 'retention', ARGV[1], 'createdAt', ARGV[2], 'active', active, 'cancelRequested', '0', 'endedAt', '',
  'names', cjson.encode(names))
return 1
