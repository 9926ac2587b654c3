-- Creates a workflow, the record of each of its jobs (QUEUED for a root, SCHEDULED for a root with a
-- delay, WAITING for the others), and enqueues its roots (a delayed one into its queue's delayed set),
-- in one step. The workflow's hash is described in lib.lua (wf_set).
-- KEYS: workflow, then per node: its queue's default stream, its record, its queue's delayed set.
-- ARGV: retention ms, created ms, then per node: name, job id, queue, task, record retention ms,
-- dependencies (JSON array), those whose failure it ignores (JSON array), dependents (JSON array),
-- message (a delayed-set member), delay ms (0 for none).
-- Returns 1; an error when the workflow exists already, unless it is this very submit's (flow_resent), which
-- stored it whole.
if redis.call('EXISTS', KEYS[1]) == 1 then
  if flow_resent(KEYS[1], ARGV[2]) then return 1 end
  return redis.error_reply('ERR workflow exists already')
end
local now = string.format('%d', lim_now())
local names = {}
local active = 0
local k = 2
for i = 3, #ARGV, 10 do
  local name, id, queue, task, retention = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  -- distinct: a dependency named twice ends once (wf_count moves a dependent's counts once per end)
  local deps, seen = 0, {}
  for _, d in ipairs(cjson.decode(ARGV[i + 5])) do
    if not seen[d] then seen[d] = true; deps = deps + 1 end
  end
  local root = deps == 0
  names[#names + 1] = name
  -- every dependency is held or enqueued yet: none ended, none failed (the counts of wf_count)
  redis.call('HSET', KEYS[1], 's:' .. name, root and 'E' or 'W', 'u:' .. name, deps, 'f:' .. name, 0,
    'j:' .. name, id, 'q:' .. name, queue, 't:' .. name, task,
    'st:' .. name, KEYS[k], 'rk:' .. name, KEYS[k + 1], 'rt:' .. name, retention, 'd:' .. name, ARGV[i + 5],
    'o:' .. name, ARGV[i + 6], 'r:' .. name, ARGV[i + 7], 'm:' .. name, ARGV[i + 8], 'dl:' .. name, KEYS[k + 2],
    'dy:' .. name, ARGV[i + 9], 'job:' .. id, name)
  redis.call('DEL', KEYS[k + 1])
  if root then
    wf_enqueue(KEYS[1], name, KEYS[k + 1], now)
  else
    redis.call('HSET', KEYS[k + 1], 'state', 'WAITING', 'task', task, 'enqueuedAt', now, 'retention', retention,
      'workflow', string.sub(KEYS[1], -37, -2))
  end
  active = active + 1
  k = k + 3
end
-- the counts' witness (wf_witness): what this step left
redis.call('HSET', KEYS[1], 'retention', ARGV[1], 'createdAt', ARGV[2], 'active', active, 'cancelRequested', '0', 'endedAt', '',
  'names', cjson.encode(names), 'cw', active, 'cd', '[]')
flow_count(KEYS[1], 'workflow', 'open', true)
return 1
