-- The library of the broker's scripts: LuaSources puts what comes before the first function, and
-- the functions a script names, before every script when it loads it, so each script is one chunk
-- of its own (EVALSHA by the chunk's SHA1) that can call any of these it names.
-- Everything here is local; nothing runs but the definitions. Names in {{...}} are the Java
-- constants LuaSources substitutes once at load (it refuses a name it does not know).

local DEFAULT_PRIORITY = {{DEFAULT_PRIORITY}}
local GROUP = '{{GROUP}}'
-- whether the queue of a settle has any admitted delivery (lim_release_all), read once per call.
-- Here, before the functions: a script carries only the functions it names (LuaSources), and
-- everything before the first one.
local lim_any = nil
-- whether the workflow of the step at hand keeps its counts 'u:' and 'f:' and they are current
-- (wf_witness), so that wf_count moves them and wf_evaluate decides from them.
local wf_counted = false
-- on a Redis Cluster, the due hash of the workflow of the step at hand (its 'duekey', read by
-- wf_witness or set by the cluster submit): what the step does to its jobs' records and queues, in
-- other slots, is recorded there (wf_effect) for ClusterWorkflows to deliver; false on a single node.
local wf_remote = false

-- Priority levels (PriorityScripts). level_stream(stream, priority): the stream of a message of
-- priority (a field value, or nil) on the queue whose default stream is stream; a level used for
-- the first time gets its stream and group (from 0, so nothing added before is skipped) and joins
-- the set of levels.
local function level_stream(stream, priority)
  if type(priority) ~= 'string' or not string.match(priority, '^[0-9]$') or priority == tostring(DEFAULT_PRIORITY) then return stream end
  local key = stream .. ':p' .. priority
  if redis.call('EXISTS', key) == 0 then
    redis.pcall('XGROUP', 'CREATE', key, GROUP, '0', 'MKSTREAM')
    redis.call('SADD', stream .. ':levels', priority)
  end
  return key
end

-- Puts a member of the delayed set (a message as JSON) onto its queue, whose default stream is
-- stream: onto the stream of its priority level, its fields in the order the broker writes them,
-- stamped with enqueued_at (epoch ms as text). A member that is not a JSON object goes onto the
-- default stream as field 'raw', so that it surfaces as a malformed delivery and is dead-lettered,
-- not lost. edit, when given, changes the decoded message first.
local function add_member_to_stream(stream, member, enqueued_at, edit)
  local ok, m = pcall(cjson.decode, member)
  if not ok or type(m) ~= 'table' then
    redis.call('XADD', stream, '*', 'raw', member)
    return
  end
  if edit then edit(m) end
  local args = {level_stream(stream, m['priority']), '*'}
  if type(m['priority']) == 'string' then args[#args + 1] = 'priority'; args[#args + 1] = m['priority'] end
  for _, name in ipairs({'id', 'task', 'queue', 'attempt', 'payload', 'payload64', 'headers'}) do
    local v = m[name]
    if v ~= nil and v ~= cjson.null then
      args[#args + 1] = name
      args[#args + 1] = tostring(v)
    end
  end
  args[#args + 1] = 'enqueuedAt'
  args[#args + 1] = enqueued_at
  redis.call('XADD', unpack(args))
end

-- Job records. apply_job(key, at) applies a job record update serialised by
-- RedisJobStore.addJobArguments from ARGV[at]: number of field strings, fields..., number of
-- deletions, names..., expiry ms (0 = keep), event channel, event message ('' = none); it and
-- skip_job return the index after it. With workflow_keeps (a settlement's update), the record of a
-- workflow's job keeps the expiry its workflow gave it (none while the workflow runs, its retention
-- once it ended): on a Cluster the workflow learns of the outcome only after the settlement, and a
-- job's own retention shorter than that gap would drop the result its dependents read. (HGET, not
-- HEXISTS or PTTL: the worker's documented rule set has it.)
local function skip_job(at)
  local ns = tonumber(ARGV[at])
  local nd = tonumber(ARGV[at + 1 + ns])
  return at + 2 + ns + nd + 3
end
local function apply_job(key, at, workflow_keeps)
  local ns = tonumber(ARGV[at])
  if ns > 0 then redis.call('HSET', key, unpack(ARGV, at + 1, at + ns)) end
  local j = at + 1 + ns
  local nd = tonumber(ARGV[j])
  if nd > 0 then redis.call('HDEL', key, unpack(ARGV, j + 1, j + nd)) end
  j = j + 1 + nd
  local ttl = tonumber(ARGV[j])
  if ttl > 0 and not (workflow_keeps and redis.call('HGET', key, 'workflow')) then
    redis.call('PEXPIRE', key, ttl)
  end
  if ARGV[j + 2] ~= '' then redis.call('PUBLISH', ARGV[j + 1], ARGV[j + 2]) end
  return j + 3
end
local function is_final(state)
  return state == 'SUCCEEDED' or state == 'DEAD_LETTERED' or state == 'CANCELLED'
end

-- Unique keys (FlowScripts): a key is given back only if it still holds the given job id. settle.lua
-- gives back the keys of its 'U' markers, cancel_job.lua the key a cancelled job's record names in
-- uniqueKey (a key of the same queue, so of the same slot).
local function release_unique(key, id)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
local function release_unique_of_job(job)
  local key = redis.call('HGET', job, 'uniqueKey')
  if key then release_unique(key, string.sub(job, -36)) end
end

-- Flow limits, used by admit.lua, settle.lua, reclaim.lua and set_queue_limits.lua. The keys they
-- touch are named from the stream key's hash tag (same Cluster slot): held (hash: receipt of an
-- admitted delivery to the concurrency limits it holds slots of), slots:<limit> (sorted set of the
-- receipts holding a slot), wait:<limit> (sorted set of the delayed-set members waiting for a slot,
-- higher priority first, then oldest), rate:<limit> (the GCRA state of a rate limit, epoch µs,
-- expiring when it passes). lim_release frees the slots of a settled delivery and moves, per slot,
-- the oldest live waiter back onto the stream with the turn header; it does nothing (one EXISTS per
-- call) on a queue where no delivery holds an admission. lim_release_all does the same for many.
local function lim_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function lim_now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function lim_base(stream)
  -- the queue's prefix ('...{queue}:') of its default stream or of a priority level's ('...:stream:p7')
  local e = string.find(stream, '}:[^}]*$')
  return string.sub(stream, 1, e + 1)
end
local function lim_member(stream, id)
  -- entry ids are unique per stream only: a level stream's carry its level
  local level = string.match(stream, ':stream:p(%d)$')
  if level then return id .. '/' .. level end
  return id
end
local function lim_turn(m)
  local h = {codec = 'json-jdk'}
  if m['headers'] ~= nil and m['headers'] ~= cjson.null then
    local ok, hh = pcall(cjson.decode, m['headers'])
    if ok and type(hh) == 'table' then h = hh end
  end
  h['limit.turn'] = tostring(m['attempt'])
  m['headers'] = cjson.encode(h)
end
local function lim_move_now(stream, member, now)
  if redis.call('ZREM', lim_base(stream) .. 'delayed', member) == 0 then return false end
  add_member_to_stream(lim_base(stream) .. 'stream', member, string.format('%d', now), lim_turn)
  return true
end
local function lim_promote(stream, lid, now)
  local wkey = lim_base(stream) .. 'wait:' .. lid
  for _ = 1, 100 do
    local w = redis.call('ZPOPMIN', wkey)
    if #w == 0 then return false end
    if lim_move_now(stream, w[1], now) then return true end
  end
  return false
end
-- Calls cmd with the fixed arguments head and then items, at most 1000 items a call (unpack's limit
-- is well above; a call's reply stays small): fn gets each reply with the index of its first item.
local function lim_chunked(head, items, fn)
  for from = 1, #items, 1000 do
    local args = {unpack(head)}
    for j = from, math.min(#items, from + 999) do args[#args + 1] = items[j] end
    local r = redis.call(unpack(args))
    if fn then fn(r, from) end
  end
end
-- lim_release_all frees the slots of all the settled deliveries ids at once: one HMGET, one HDEL and
-- one ZREM per limit for the lot (per-entry calls cost most of a settle's Redis time on a queue
-- with a limit), then, per limit, as many waiters moved back as slots were freed. A delivery admitted
-- without a record (admit.lua: the queue's limit could not bind) frees room under the queue's limit
-- too: as many of its waiters move back as such deliveries settle. Nothing held and no one waiting
-- for the queue's limit (one EXISTS) is the common case of a queue whose limit does not bind.
local function lim_release_all(stream, ids)
  local held = lim_base(stream) .. 'held'
  local qwait = lim_base(stream) .. 'wait:q'
  if lim_any == nil then lim_any = redis.call('EXISTS', held, qwait) > 0 end
  if not lim_any or #ids == 0 then return end
  local members = {}
  local suffix = lim_member(stream, '')
  for j, id in ipairs(ids) do members[j] = id .. suffix end
  local gone, freed, order = {}, {}, {}
  local function free(lid, member)
    if not freed[lid] then freed[lid] = {}; order[#order + 1] = lid end
    freed[lid][#freed[lid] + 1] = member
  end
  lim_chunked({'HMGET', held}, members, function(r, from)
    for j = 1, #r do
      local lids = r[j]
      if lids then
        local member = members[from + j - 1]
        gone[#gone + 1] = member
        if lids == '' then
        elseif not string.find(lids, ' ', 1, true) then free(lids, member)
        else for lid in string.gmatch(lids, '%S+') do free(lid, member) end end
      end
    end
  end)
  lim_chunked({'HDEL', held}, gone)
  local now = nil
  local unrecorded = #members - #gone
  for _, lid in ipairs(order) do
    lim_chunked({'ZREM', lim_base(stream) .. 'slots:' .. lid}, freed[lid])
    local moves = #freed[lid] + (lid == 'q' and unrecorded or 0)
    if lid == 'q' then unrecorded = 0 end
    if redis.call('EXISTS', lim_base(stream) .. 'wait:' .. lid) == 1 then
      now = now or lim_now()
      for _ = 1, moves do
        if not lim_promote(stream, lid, now) then break end
      end
    end
  end
  if unrecorded > 0 and redis.call('EXISTS', qwait) == 1 then
    now = now or lim_now()
    for _ = 1, unrecorded do
      if not lim_promote(stream, 'q', now) then break end
    end
  end
end
local function lim_release(stream, id)
  lim_release_all(stream, {id})
end

-- Broker-wide counts of batches and workflows by state (Batches.counts, Workflows.counts): one hash,
-- <prefix>:flows:counts, fields '<kind>:<state>' (kind batch or workflow; state open, succeeded,
-- failed or cancelled), moved by the steps that create and end each flow, whose own hash says in
-- 'counted' where it is counted. Only its submit ('submitted') counts a flow the first time: one
-- stored before the counts has no 'counted' and is left out, also when a replay resumes it (so open
-- never goes below zero). HGET and HSET, not HINCRBY: the producer's rule set, which submits and
-- cancels, has those.
local function flow_count(flow, kind, state, submitted)
  local old = redis.call('HGET', flow, 'counted')
  if old == state or (not old and not submitted) then return end
  -- a batch on a Cluster names its counts (in its own slot: ClusterBatches); else the prefix's
  local counts = redis.call('HGET', flow, 'counts') or (string.match(flow, '^(.*):' .. kind .. ':{[^}]*}$') .. ':flows:counts')
  if old then
    redis.call('HSET', counts, kind .. ':' .. old, tonumber(redis.call('HGET', counts, kind .. ':' .. old) or '0') - 1)
  end
  redis.call('HSET', counts, kind .. ':' .. state, tonumber(redis.call('HGET', counts, kind .. ':' .. state) or '0') + 1)
  redis.call('HSET', flow, 'counted', state)
end
-- True when the existing batch or workflow 'flow' is the one a submit created at 'created' (ms): the
-- same submit, sent again whole (with wait.replicas, a write no replica confirmed is resent; once
-- is the rule otherwise: WriteOnce). A flow's id is minted for one submit, so only its own resend
-- finds it with its creation time; what it stored stands.
local function flow_resent(flow, created)
  return redis.call('HGET', flow, 'createdAt') == created
end
-- The state an ended flow is counted in (FlowCounts): a batch whose jobs all succeeded succeeded,
-- as its status says, even when cancelled; a cancelled workflow is cancelled, as its status says.
local function flow_end_state(all_succeeded, flow, cancel_wins)
  local cancelled = redis.call('HGET', flow, 'cancelRequested') == '1'
  if cancelled and (cancel_wins or not all_succeeded) then return 'cancelled' end
  return all_succeeded and 'succeeded' or 'failed'
end

-- Batches (RedisBatches). A batch is a hash ('open', 'total', 'ended', 'succeeded', 'dead',
-- 'cancelled', 'retention', the callbacks 'cb:KIND' as delayed-set members with their stream
-- 'cbstream:KIND' and, for a tracked one, record 'cbjob:KIND', 'cbtask:KIND', 'cbret:KIND', and the
-- claims 'fired:KIND') beside a hash of its jobs: id -> outcome letter (P pending, S, D, C) and queue.
-- Only HGET and HSET read and write them (with PEXPIRE and, in settle, HINCRBY): commands every
-- documented ACL rule set that runs these scripts grants.
-- batch_fire enqueues a callback once: setting its claim is the only way in. The pair of a count
-- keyed by job id and a claim-guarded enqueue of a stored message is what a held job needs too
-- (enqueued once when the count of its prerequisites completes).
local function batch_fire(batch, kind, now)
  local member = redis.call('HGET', batch, 'cb:' .. kind)
  if not member or redis.call('HGET', batch, 'fired:' .. kind) then return end
  redis.call('HSET', batch, 'fired:' .. kind, now)
  local due = redis.call('HGET', batch, 'duekey')
  if due then
    -- a batch on a Cluster: the callback's queue is in another slot, so the claim records the callback
    -- as due (its delivery, in the batch's 'cbd:KIND') and indexes the batch; ClusterBatches delivers it
    -- once (batch_deliver.lua, idempotent by the callback's id) and then takes it off
    redis.call('HSET', due, 'cb:' .. kind, redis.call('HGET', batch, 'cbd:' .. kind), 'n',
      tonumber(redis.call('HGET', due, 'n') or '0') + 1)
    redis.call('ZADD', redis.call('HGET', batch, 'index'), 'NX', now, redis.call('HGET', batch, 'id'))
    return
  end
  add_member_to_stream(redis.call('HGET', batch, 'cbstream:' .. kind), member, now)
  local job = redis.call('HGET', batch, 'cbjob:' .. kind)
  if job then
    redis.call('DEL', job)
    redis.call('HSET', job, 'state', 'QUEUED', 'task', redis.call('HGET', batch, 'cbtask:' .. kind), 'enqueuedAt', now,
      'retention', redis.call('HGET', batch, 'cbret:' .. kind))
  end
end
-- Completes a closed batch whose jobs all ended: the completion (and success) callbacks, and expiry.
-- ended and succeeded are the counts when the caller has them (settle: the replies of its HINCRBYs;
-- succeeded false when the job just counted did not succeed), nil to read them; now (epoch ms as
-- text) nil to read the clock only when the batch completes. A settle that does not complete the
-- batch reads only 'total'.
local function batch_complete_if_done(batch, jobs, now, ended, succeeded)
  local total = tonumber(redis.call('HGET', batch, 'total'))
  ended = ended or tonumber(redis.call('HGET', batch, 'ended'))
  if ended < total or redis.call('HGET', batch, 'open') ~= '0' then return end
  now = now or string.format('%d', lim_now())
  batch_fire(batch, 'COMPLETE', now)
  if succeeded == nil then succeeded = tonumber(redis.call('HGET', batch, 'succeeded')) end
  if succeeded == total then batch_fire(batch, 'SUCCESS', now) end
  if not redis.call('HGET', batch, 'endedAt') then
    redis.call('HSET', batch, 'endedAt', now)
    local retention = redis.call('HGET', batch, 'retention')
    redis.call('PEXPIRE', batch, retention)
    redis.call('PEXPIRE', jobs, retention)
    flow_count(batch, 'batch', flow_end_state(succeeded == total, batch, false))
  end
end
-- Counts the final outcome (S, D or C) of job child of a batch, once per child: a child counted
-- already, or one the batch does not list (or a batch that expired), changes nothing. The counts
-- come from the HINCRBYs' replies, and the clock is read only when a callback may fire: on a
-- child that does not complete its batch this is five commands.
local function batch_settled(batch, jobs, child, outcome)
  local v = redis.call('HGET', jobs, child)
  if not v or string.sub(v, 1, 1) ~= 'P' then return end
  redis.call('HSET', jobs, child, outcome .. string.sub(v, 2))
  local ended = redis.call('HINCRBY', batch, 'ended', 1)
  local succeeded = false
  if outcome == 'S' then
    succeeded = redis.call('HINCRBY', batch, 'succeeded', 1)
  elseif outcome == 'D' then
    if redis.call('HINCRBY', batch, 'dead', 1) == 1 then batch_fire(batch, 'DEATH', string.format('%d', lim_now())) end
  else
    redis.call('HINCRBY', batch, 'cancelled', 1)
  end
  batch_complete_if_done(batch, jobs, nil, ended, succeeded)
end

-- Workflows (RedisWorkflows). A workflow is one hash: 'retention', 'createdAt', 'active' (how many
-- nodes are held or enqueued), 'cancelRequested', 'endedAt' ('' while active), 'names' (JSON array,
-- each node after those it depends on), 'job:<id>' -> node name, and per node N: 's:N' its state (W
-- held, E enqueued, S, D, C, K skipped), 'j:N' job id, 'q:N' queue, 't:N' task, 'st:N' its queue's
-- default stream, 'rk:N' its record, 'rt:N' the record's retention, 'd:N', 'o:N', 'r:N' (JSON arrays:
-- its dependencies, those whose failure it ignores, its dependents), 'm:N' its message as a
-- delayed-set member, 'dy:N' its delay in ms (0 for none), 'dl:N' its queue's delayed set, and the
-- counts of its dependencies 'u:N' held or enqueued and 'f:N' failed (D, C or K) whose failure it
-- does not ignore (wf_count; absent in a workflow stored before them, which wf_evaluate then reads
-- in full), their witness 'cw' and 'cd' (wf_witness), and 'counted' (flow_count). Read and written
-- with HGET, HMGET and HSET (HDEL when wf_witness drops the counts; PEXPIRE on an end, PERSIST on a
-- resume, of it and of its jobs' records, which only a worker's settle or a cancel makes; a skipped or cancelled job's end is
-- published, as a job cancel publishes it), as the documented worker rule set allows; the producer's
-- submits (ZADD for a delayed root).
-- A node leaves W or K for E only in wf_release, inside the step that changed a dependency's
-- state: so it is enqueued once, whatever the order of its dependencies' settlements.
local function wf_active(s)
  return s == 'W' or s == 'E'
end
local function wf_failed(s)
  return s == 'D' or s == 'C' or s == 'K'
end
-- Whether workflow wf's counts are current, checked at the start of each step that changes its
-- states (wf_settled, cancel_workflow.lua), before any count is read or moved; sets wf_counted. A
-- release before the counts (a worker of it beside this one in a rolling upgrade) changes states
-- without moving them, and without writing any field of the hash but the states and 'active'. So
-- every step of this code records what it left: 'cw' the value of 'active', 'cd' the nodes in D (JSON
-- array). Such a step always changes one of them: a settle ends a node (active down by it and by
-- each node its failure skips, while no node resumes unless a failure goes), and a replay's success
-- takes a node out of D. Steps of it that add and take away as much between two of ours include a
-- settle that is not undone (a node ended, or resumed by a replay of a failure in 'cd'), so the pair
-- still differs. On a difference the counts go, and the workflow is read in full from then on
-- (wf_evaluate), as one stored without them: its states are right (that release evaluates from
-- them), only the counts are stale. A workflow without 'cw' has no counts, or has them from a build
-- before the witness: read in full too.
local function wf_witness(wf)
  local r = redis.call('HMGET', wf, 'cw', 'active', 'cd', 'duekey')
  wf_counted = false
  wf_remote = r[4] or false
  if not r[1] then return end
  local current = r[1] == r[2]
  if current and r[3] ~= '[]' then
    local fields = {}
    for j, n in ipairs(cjson.decode(r[3])) do fields[j] = 's:' .. n end
    lim_chunked({'HMGET', wf}, fields, function(states)
      for j = 1, #states do if states[j] ~= 'D' then current = false end end
    end)
  end
  if current then
    wf_counted = true
    return
  end
  local stale = {'cw', 'cd'}
  for _, n in ipairs(cjson.decode(redis.call('HGET', wf, 'names'))) do
    stale[#stale + 1] = 'u:' .. n
    stale[#stale + 1] = 'f:' .. n
  end
  lim_chunked({'HDEL', wf}, stale)
end
-- Keeps 'cd' (wf_witness) as node name leaves or enters D.
local function wf_witness_dead(wf, name, old, new)
  if (old == 'D') == (new == 'D') then return end
  local dead = {}
  for _, n in ipairs(cjson.decode(redis.call('HGET', wf, 'cd'))) do
    if n ~= name then dead[#dead + 1] = n end
  end
  if new == 'D' then dead[#dead + 1] = name end
  redis.call('HSET', wf, 'cd', #dead == 0 and '[]' or cjson.encode(dead))
end
-- Keeps the counts 'u:' and 'f:' of the dependents of node name, whose state changes from old to
-- new in this step: every change of a node's state goes through wf_set, which calls this, so each
-- count moves once per change of a dependency, whatever resends, reclaims or replays settle it
-- again (those change no state). A workflow whose counts are not current (wf_witness), or a
-- dependent without counts (stored before them), is left so.
-- Reads and writes the dependents' counts in one HMGET and one HSET per 1000 (lim_chunked); reads
-- the failures a dependent ignores only when the failure of name changes.
local function wf_count(wf, name, old, new)
  if not wf_counted then return end
  wf_witness_dead(wf, name, old, new)
  local du = (wf_active(new) and 1 or 0) - (wf_active(old) and 1 or 0)
  local df = (wf_failed(new) and 1 or 0) - (wf_failed(old) and 1 or 0)
  if du == 0 and df == 0 then return end
  local dependents, seen = {}, {}
  for _, d in ipairs(cjson.decode(redis.call('HGET', wf, 'r:' .. name))) do
    if not seen[d] then seen[d] = true; dependents[#dependents + 1] = d end
  end
  if #dependents == 0 then return end
  local per = df == 0 and 2 or 3
  local fields = {}
  for _, d in ipairs(dependents) do
    fields[#fields + 1] = 'u:' .. d
    fields[#fields + 1] = 'f:' .. d
    if per == 3 then fields[#fields + 1] = 'o:' .. d end
  end
  local counts = {}
  lim_chunked({'HMGET', wf}, fields, function(r, from)
    for j = 1, #r do counts[from + j - 1] = r[j] end
  end)
  local set = {}
  for k, d in ipairs(dependents) do
    local at = (k - 1) * per + 1
    local u, f = counts[at], counts[at + 1]
    if u and f then
      set[#set + 1] = 'u:' .. d
      set[#set + 1] = tostring(tonumber(u) + du)
      if df ~= 0 then
        local o = counts[at + 2]
        local ignored = false
        if o and o ~= '[]' then
          for _, x in ipairs(cjson.decode(o)) do
            if x == name then ignored = true; break end
          end
        end
        if not ignored then
          set[#set + 1] = 'f:' .. d
          set[#set + 1] = tostring(tonumber(f) + df)
        end
      end
    end
  end
  if #set > 0 then lim_chunked({'HSET', wf}, set) end
end
-- On a Cluster (wf_remote): merges fields into node name's pending effect in the due hash, the state
-- its record and queue are to reach ('st': W held, E enqueued ('due' when delayed), C cancelled; 'cr'
-- cancel-requested; 'keep' its expiry, 'P' to persist; 'create' set by the submit, kept until
-- delivered; and what the delivery needs of the node, 'j', 'q', 't', 'rk', 'rt', 'sk', 'dl', 'm'), stamped with
-- a version 'v' from the workflow's counter 'dv' so that a delivery never applies an older effect
-- over a newer one (wf_deliver.lua), and indexes the workflow as due. An entry delivered reads ''
-- ('n' counts those that do not), as a batch's due hash (undue.lua).
local function wf_effect(wf, name, fields, now)
  local old = redis.call('HGET', wf_remote, 'e:' .. name)
  local op
  if old and old ~= '' then
    op = cjson.decode(old)
  else
    redis.call('HSET', wf_remote, 'n', tonumber(redis.call('HGET', wf_remote, 'n') or '0') + 1)
    -- what the delivery needs of the node: its job, queue, task, record and retention, stream, delayed set
    local r = redis.call('HMGET', wf, 'j:' .. name, 'q:' .. name, 't:' .. name, 'rk:' .. name, 'rt:' .. name, 'st:' .. name,
      'dl:' .. name)
    op = {j = r[1], q = r[2], t = r[3], rk = r[4], rt = r[5], sk = r[6], dl = r[7]}
  end
  for k, v in pairs(fields) do op[k] = v end
  if fields['st'] == 'E' then op['m'] = redis.call('HGET', wf, 'm:' .. name) end
  local v = tonumber(redis.call('HGET', wf, 'dv') or '0') + 1
  redis.call('HSET', wf, 'dv', v)
  op['v'] = v
  redis.call('HSET', wf_remote, 'e:' .. name, cjson.encode(op))
  redis.call('ZADD', redis.call('HGET', wf, 'index'), 'NX', now or string.format('%d', lim_now()), string.sub(wf, -37, -2))
end
-- The records of the workflow's jobs live as long as its own: kept (PERSIST) while it is active, so
-- that a dependent reads a result however long the workflow runs, and given at least its retention
-- (PEXPIRE, the longer of that and their own) when it ends, so that a late replay resumes it.
-- keep_ms nil persists every record.
local function wf_keep_record(wf, name, record, keep_ms)
  if keep_ms then keep_ms = math.max(keep_ms, tonumber(redis.call('HGET', wf, 'rt:' .. name) or '0')) end
  if wf_remote then
    wf_effect(wf, name, {keep = keep_ms and string.format('%d', keep_ms) or 'P'})
  elseif keep_ms then
    redis.call('PEXPIRE', record, keep_ms)
  else
    redis.call('PERSIST', record)
  end
end
local function wf_keep_records(wf, keep_ms)
  for _, n in ipairs(cjson.decode(redis.call('HGET', wf, 'names'))) do
    wf_keep_record(wf, n, redis.call('HGET', wf, 'rk:' .. n), keep_ms)
  end
end
-- Counts workflow wf (flow_count) as open while active nodes are held or enqueued, else in the state
-- its nodes ended in: read with one HMGET per 1000 nodes, only when it ends or an ended one changes.
local function wf_flow_count(wf, active)
  if active > 0 then return flow_count(wf, 'workflow', 'open') end
  local fields = {}
  for j, n in ipairs(cjson.decode(redis.call('HGET', wf, 'names'))) do fields[j] = 's:' .. n end
  local all = true
  lim_chunked({'HMGET', wf}, fields, function(states)
    for j = 1, #states do if states[j] ~= 'S' then all = false end end
  end)
  flow_count(wf, 'workflow', flow_end_state(all, wf, true))
end
-- Ends workflow wf now: its record and those of its jobs kept for its retention from now. A replay
-- that succeeds in an ended workflow ends it again, later: the retention starts again from that end.
local function wf_end(wf, now)
  local keep = redis.call('HGET', wf, 'retention')
  redis.call('HSET', wf, 'endedAt', now)
  redis.call('PEXPIRE', wf, keep)
  wf_keep_records(wf, tonumber(keep))
  wf_flow_count(wf, 0)
end
-- Sets node name's state, keeping 'active': the record expires once nothing is held or enqueued,
-- and is kept again while a resume (a replayed dependency that succeeded) runs; the records of its
-- jobs with it (wf_keep_records).
local function wf_set(wf, name, new, now)
  local old = redis.call('HGET', wf, 's:' .. name)
  redis.call('HSET', wf, 's:' .. name, new)
  wf_count(wf, name, old, new)
  local delta = (wf_active(new) and 1 or 0) - (wf_active(old) and 1 or 0)
  local active = tonumber(redis.call('HGET', wf, 'active')) + delta
  local record = redis.call('HGET', wf, 'rk:' .. name)
  if delta == 0 then
    -- one end for another (a replay that succeeded): its record, just given its own retention, kept as the others
    if not wf_active(new) then
      if active > 0 then
        wf_keep_record(wf, name, record, nil)
      else
        wf_end(wf, now)
      end
    end
    return
  end
  if wf_counted then
    redis.call('HSET', wf, 'active', active, 'cw', active)
  else
    redis.call('HSET', wf, 'active', active)
  end
  if active == 0 then
    wf_end(wf, now)
  elseif active == delta then
    redis.call('HSET', wf, 'endedAt', '')
    redis.call('PERSIST', wf)
    wf_keep_records(wf, nil)
    wf_flow_count(wf, active)
  elseif not wf_active(new) then
    wf_keep_record(wf, name, record, nil)
  end
end
-- The record of node name starts again as state (QUEUED or WAITING), as a submit writes it, naming
-- its workflow (the id in the braces of the workflow's key).
local function wf_reset(wf, name, record, state, now)
  if wf_remote then return wf_effect(wf, name, {st = 'W'}, now) end
  redis.call('DEL', record)
  redis.call('HSET', record, 'state', state, 'task', redis.call('HGET', wf, 't:' .. name), 'enqueuedAt', now,
    'retention', redis.call('HGET', wf, 'rt:' .. name), 'workflow', string.sub(wf, -37, -2))
end
-- Puts released node name on its queue or, with a delay ('dy:N' ms; absent in a workflow stored
-- before delays, so none), into its queue's delayed set ('dl:N'), due that long from now; its
-- record starts again as QUEUED or SCHEDULED.
local function wf_enqueue(wf, name, record, now)
  local delay = tonumber(redis.call('HGET', wf, 'dy:' .. name) or '0')
  if wf_remote then
    return wf_effect(wf, name, {st = 'E', due = delay > 0 and string.format('%d', tonumber(now) + delay) or nil}, now)
  end
  local member = redis.call('HGET', wf, 'm:' .. name)
  if delay > 0 then
    local due = string.format('%d', tonumber(now) + delay)
    redis.call('ZADD', redis.call('HGET', wf, 'dl:' .. name), due, member)
    wf_reset(wf, name, record, 'SCHEDULED', now)
    redis.call('HSET', record, 'due', due)
  else
    add_member_to_stream(redis.call('HGET', wf, 'st:' .. name), member, now)
    wf_reset(wf, name, record, 'QUEUED', now)
  end
end
-- The record of a node that will not be enqueued ends CANCELLED, unless it ended already, and the
-- end is published on its queue's job events (<prefix>:{queue}:jobs, beside <prefix>:{queue}:job:<id>)
-- as start_jobs.lua publishes one, so a JobHandle waiting for its result learns of it.
local function wf_cancel_record(wf, name, record, now)
  if wf_remote then return wf_effect(wf, name, {st = 'C'}, now) end
  if is_final(redis.call('HGET', record, 'state')) then return end
  redis.call('HSET', record, 'state', 'CANCELLED', 'endedAt', now)
  redis.call('PEXPIRE', record, redis.call('HGET', wf, 'rt:' .. name))
  redis.call('PUBLISH', string.sub(record, 1, #record - 40) .. 'jobs', 'E ' .. string.sub(record, -36))
end
-- Whether the job of a held or skipped node was cancelled by its own id (cancel_job.lua marks its
-- record; a skip does not), or its record is gone: a held job's record is kept while its workflow is
-- active, unless such a cancel gave it its own retention.
local function wf_cancelled_by_id(record)
  -- on a Cluster the record is in another slot: its delivery tells instead (wf_deliver.lua, wf_cancelled_at_delivery)
  if wf_remote then return false end
  local r = redis.call('HMGET', record, 'state', 'cancelledById')
  return not r[1] or r[2] == '1'
end
-- What node name's dependencies make it: K on a failure it does not ignore, else W until all
-- ended, else E. From its counts (wf_count): two fields, however many dependencies it has. A node
-- stored without them, or whose counts are not current (wf_witness), reads its dependencies'
-- states, one HMGET per 1000 (lim_chunked): n fields on each of its n dependencies' settlements.
local function wf_evaluate(wf, name)
  if wf_counted then
    local c = redis.call('HMGET', wf, 'u:' .. name, 'f:' .. name)
    if c[1] and c[2] then
      if tonumber(c[2]) > 0 then return 'K' end
      return tonumber(c[1]) > 0 and 'W' or 'E'
    end
  end
  local ignored = {}
  for _, d in ipairs(cjson.decode(redis.call('HGET', wf, 'o:' .. name))) do ignored[d] = true end
  local deps = cjson.decode(redis.call('HGET', wf, 'd:' .. name))
  local fields = {}
  for j, d in ipairs(deps) do fields[j] = 's:' .. d end
  local ready, failed = true, false
  lim_chunked({'HMGET', wf}, fields, function(states, from)
    for j = 1, #states do
      local s = states[j]
      if wf_active(s) then
        ready = false
      elseif s ~= 'S' and not ignored[deps[from + j - 1]] then
        failed = true
      end
    end
  end)
  if failed then return 'K' end
  return ready and 'E' or 'W'
end
-- Evaluates the dependents of node changed, transitively: enqueues those now allowed to run, skips
-- those a failure stops, holds again a skipped one whose failed dependency was replayed. A node found
-- ready is enqueued only once the walk has made every change: a dependency whose failure it ignores
-- may be held again later in the same walk (a replay resumed what skipped it), and a node walked
-- before it would otherwise run ahead of it. Until then it is held, which counts as enqueued does.
local function wf_release(wf, changed, now)
  if redis.call('HGET', wf, 'cancelRequested') == '1' then return end
  local ready = {}
  local work = cjson.decode(redis.call('HGET', wf, 'r:' .. changed))
  -- a node waiting in work is not added again: its one evaluation comes after every change made
  -- before it is taken, and a change after that adds it again (a node that many released nodes
  -- depend on is evaluated once, not once per node released)
  local queued = {}
  for _, name in ipairs(work) do queued[name] = true end
  local i = 1
  while i <= #work do
    local name = work[i]
    i = i + 1
    queued[name] = nil
    local s = redis.call('HGET', wf, 's:' .. name)
    if s == 'W' or s == 'K' then
      local next = wf_evaluate(wf, name)
      if next ~= s then
        local record = redis.call('HGET', wf, 'rk:' .. name)
        if next ~= 'K' and wf_cancelled_by_id(record) then
          -- cancelled by its own job id while held or skipped: never enqueued nor held again
          next = 'C'
          if not redis.call('HGET', record, 'state') then -- its retention ran out while it was held
            redis.call('HSET', record, 'state', 'CANCELLED', 'task', redis.call('HGET', wf, 't:' .. name), 'endedAt', now,
              'retention', redis.call('HGET', wf, 'rt:' .. name), 'workflow', string.sub(wf, -37, -2), 'cancelledById', '1')
          end
        elseif next == 'E' then
          ready[#ready + 1] = name
          next = 'W'
          if s == 'K' then wf_reset(wf, name, record, 'WAITING', now) end
        elseif next == 'K' then
          wf_cancel_record(wf, name, record, now)
        else
          wf_reset(wf, name, record, 'WAITING', now)
        end
        if next ~= s then
          wf_set(wf, name, next, now)
          for _, d in ipairs(cjson.decode(redis.call('HGET', wf, 'r:' .. name))) do
            if not queued[d] then
              queued[d] = true
              work[#work + 1] = d
            end
          end
        end
      end
    end
  end
  for _, name in ipairs(ready) do
    if redis.call('HGET', wf, 's:' .. name) == 'W' and wf_evaluate(wf, name) == 'E' then
      wf_enqueue(wf, name, redis.call('HGET', wf, 'rk:' .. name), now)
      wf_set(wf, name, 'E', now)
    end
  end
end
-- Records the final outcome (S, D or C) of job of a workflow: an enqueued node takes it, a
-- dead-lettered one a later success (its replay's); anything else (a resend's effect, a job the
-- workflow does not list, a workflow that expired) changes nothing.
local function wf_settled(wf, job, outcome)
  local name = redis.call('HGET', wf, 'job:' .. job)
  if not name then return end
  local s = redis.call('HGET', wf, 's:' .. name)
  if s ~= 'E' and not (s == 'D' and outcome == 'S') then return end
  local now = string.format('%d', lim_now())
  wf_witness(wf)
  wf_set(wf, name, outcome, now)
  wf_release(wf, name, now)
end
-- On a Cluster: the delivery of held or released node job found its record cancelled by its own id, or
-- gone (wf_deliver.lua), so it was not enqueued; the node ends cancelled (as wf_release ends it on a
-- single node) and its dependents are evaluated. Anything but a held or enqueued node (an outcome
-- applied again) changes nothing.
local function wf_cancelled_at_delivery(wf, job)
  local name = redis.call('HGET', wf, 'job:' .. job)
  if not name then return end
  local s = redis.call('HGET', wf, 's:' .. name)
  if s ~= 'W' and s ~= 'E' then return end
  local now = string.format('%d', lim_now())
  wf_witness(wf)
  wf_set(wf, name, 'C', now)
  wf_release(wf, name, now)
end
