-- Applies the final outcome of a job of a workflow on a Redis Cluster, taken from its queue's workflow
-- outbox (settle.lua's 'O', or wf_deliver.lua's X), to the workflow, in the workflow's slot: wf_settled
-- (lib.lua) takes an outcome only from an enqueued node (or a success from a dead-lettered one), and
-- wf_cancelled_at_delivery X only from a held or enqueued one, so applying an outcome again (a sweep,
-- two forwarders) changes nothing. What it does to other jobs' records and queues it records as due
-- (wf_effect).
-- KEYS: workflow, its due hash. ARGV: job id, outcome (S, D, C, or X: cancelled by its own id, found
-- by its delivery). Returns 1 when the workflow has something due (ClusterWorkflows then delivers it), else 0.
if redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[2] == 'X' then wf_cancelled_at_delivery(KEYS[1], ARGV[1]) else wf_settled(KEYS[1], ARGV[1], ARGV[2]) end
end
return redis.call('EXISTS', KEYS[2])
