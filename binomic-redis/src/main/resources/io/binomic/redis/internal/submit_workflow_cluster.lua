-- Creates a workflow on a Redis Cluster (ClusterWorkflows), where its jobs' queues and records are in
-- other slots than the workflow: in one step in the workflow's slot, the workflow's hash as
-- submit_workflow.lua writes it (lib.lua, wf_set), with 'duekey', 'index', 'counts' naming its keys
-- here, and each node's first effect in its due hash (wf_effect: a root enqueued, any other held, each
-- with 'create'), for ClusterWorkflows to deliver each in its queue's slot (wf_deliver.lua). Once this
-- step is done every record is written and every root enqueued; if it fails nothing is.
-- KEYS: workflow, its due hash, the due index, the counts. ARGV: retention ms, created ms, then per
-- node: name, job id, queue, task, record retention ms, dependencies (JSON array), those whose failure
-- it ignores (JSON array), dependents (JSON array), message (a delayed-set member), delay ms (0 for
-- none), its queue's default stream, its record, its queue's delayed set (key names, kept as text).
-- Returns 1; an error when the workflow exists already, unless it is this very submit's (flow_resent).
if redis.call('EXISTS', KEYS[1]) == 1 then
  if flow_resent(KEYS[1], ARGV[2]) then return 1 end
  return redis.error_reply('ERR workflow exists already')
end
local now = string.format('%d', lim_now())
wf_remote = KEYS[2]
redis.call('HSET', KEYS[1], 'duekey', KEYS[2], 'index', KEYS[3], 'counts', KEYS[4], 'dv', 0)
local names = {}
local active = 0
for i = 3, #ARGV, 13 do
  local name, id, queue, task, retention = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local deps, seen = 0, {}
  for _, d in ipairs(cjson.decode(ARGV[i + 5])) do
    if not seen[d] then seen[d] = true; deps = deps + 1 end
  end
  local root = deps == 0
  names[#names + 1] = name
  redis.call('HSET', KEYS[1], 's:' .. name, root and 'E' or 'W', 'u:' .. name, deps, 'f:' .. name, 0,
    'j:' .. name, id, 'q:' .. name, queue, 't:' .. name, task,
    'st:' .. name, ARGV[i + 10], 'rk:' .. name, ARGV[i + 11], 'rt:' .. name, retention, 'd:' .. name, ARGV[i + 5],
    'o:' .. name, ARGV[i + 6], 'r:' .. name, ARGV[i + 7], 'm:' .. name, ARGV[i + 8], 'dl:' .. name, ARGV[i + 12],
    'dy:' .. name, ARGV[i + 9], 'job:' .. id, name)
  wf_effect(KEYS[1], name, {create = '1'}, now)
  if root then
    wf_enqueue(KEYS[1], name, nil, now)
  else
    wf_reset(KEYS[1], name, nil, 'WAITING', now)
  end
  active = active + 1
end
redis.call('HSET', KEYS[1], 'retention', ARGV[1], 'createdAt', ARGV[2], 'active', active, 'cancelRequested', '0', 'endedAt', '',
  'names', cjson.encode(names), 'cw', active, 'cd', '[]')
flow_count(KEYS[1], 'workflow', 'open', true)
return 1
