"""Lua scripts that make ``RedisStorage``'s multi-key writes atomic.

Each script receives the key prefix as ``ARGV[1]`` and builds index key names itself, so it
needs a single Redis (not Redis Cluster). Optional ids travel as ``""`` for None and
``"=" .. id`` otherwise, so an empty-string id stays distinct from a missing one.
"""

from __future__ import annotations

from storage.redis._grant_script import GRANT_WRITES

_SNAPSHOTS = """
local function unindex(p, run, cur)
  redis.call('ZREM', p .. 'snaps:all', run)
  redis.call('ZREM', p .. 'snaps:decidable', run)
  redis.call('ZREM', p .. 'snaps:agent:' .. cur[2], run)
  redis.call('ZREM', p .. 'snaps:due:' .. cur[2], run)
  if cur[3] and cur[3] ~= '' then
    redis.call('ZREM', p .. 'snaps:thread:' .. string.sub(cur[3], 2), run)
  end
  if cur[4] and cur[4] ~= '' then
    redis.call('ZREM', p .. 'snaps:resource:' .. string.sub(cur[4], 2), run)
  end
end

local function snapshot_fits(key, expected)
  local stored = tonumber(redis.call('HGET', key, 'version')) or 0
  return stored == tonumber(expected)
end

-- s: key, run, version, doc, agent, thread, resource, score (strings), decidable ('1'/'0'),
-- due (the due_at score, '' when nothing is due)
local function write_snapshot(p, s)
  local cur = redis.call('HMGET', s.key, 'version', 'agent', 'thread', 'resource')
  if cur[1] then
    unindex(p, s.run, cur)
  end
  redis.call('HSET', s.key, 'version', s.version, 'doc', s.doc, 'agent', s.agent,
             'thread', s.thread, 'resource', s.resource, 'decidable', s.decidable)
  redis.call('ZADD', p .. 'snaps:all', s.score, s.run)
  if s.decidable == '1' then
    redis.call('ZADD', p .. 'snaps:decidable', s.score, s.run)
  end
  redis.call('ZADD', p .. 'snaps:agent:' .. s.agent, s.score, s.run)
  if s.due ~= '' then
    redis.call('ZADD', p .. 'snaps:due:' .. s.agent, s.due, s.run)
  end
  if s.thread ~= '' then
    redis.call('ZADD', p .. 'snaps:thread:' .. string.sub(s.thread, 2), s.score, s.run)
  end
  if s.resource ~= '' then
    redis.call('ZADD', p .. 'snaps:resource:' .. string.sub(s.resource, 2), s.score, s.run)
  end
end

local function delete_snapshot(p, run)
  local key = p .. 'snap:' .. run
  local cur = redis.call('HMGET', key, 'version', 'agent', 'thread', 'resource')
  if cur[1] then
    unindex(p, run, cur)
    redis.call('DEL', key)
  end
  redis.call('DEL', p .. 'approvals:' .. run)
end
"""

SAVE_SNAPSHOT = (
    _SNAPSHOTS
    + """
-- ARGV: prefix, snapshot JSON {key, run, expected, version, doc, agent, thread, resource,
-- score, decidable, due}
local s = cjson.decode(ARGV[2])
if not snapshot_fits(s.key, s.expected) then
  return 0
end
write_snapshot(ARGV[1], s)
return 1
"""
)

DELETE_SNAPSHOT = (
    _SNAPSHOTS
    + """
-- ARGV: prefix, run_id
delete_snapshot(ARGV[1], ARGV[2])
return 1
"""
)

BACKFILL_DECIDABLE = """
-- ARGV: prefix. Once per key prefix: index as decidable the snapshots written before
-- snaps:decidable existed (their hash has no 'decidable' field).
local p = ARGV[1]
if redis.call('GET', p .. 'layout:decidable') then
  return 0
end
local runs = redis.call('ZRANGE', p .. 'snaps:all', 0, -1, 'WITHSCORES')
for i = 1, #runs, 2 do
  if redis.call('HGET', p .. 'snap:' .. runs[i], 'decidable') ~= '0' then
    redis.call('ZADD', p .. 'snaps:decidable', runs[i + 1], runs[i])
  end
end
redis.call('SET', p .. 'layout:decidable', '1')
return 1
"""

CLAIM = """
-- KEYS[1] the run's claims hash, KEYS[2] the unfinished-claims zset, KEYS[3] the leases zset
-- ARGV: claim key, claim JSON, 1 when unfinished, score, unfinished member, lease score
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  if ARGV[3] == '1' then
    redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
    redis.call('ZADD', KEYS[3], ARGV[6], ARGV[5])
  end
  return false
end
return redis.call('HGET', KEYS[1], ARGV[1])
"""

EXPIRED_CLAIMS = """
-- ARGV: prefix, now (score), limit. Returns member, claim JSON pairs of claims still claimed
-- whose lease score is below now; unfinished claims without a lease score yet (written
-- before leases) join the leases zset with score 0 first, and members no longer unfinished
-- (completed, or gone) leave it.
local p = ARGV[1]
local leases, unfinished = p .. 'claims:leases', p .. 'claims:unfinished'
for _, member in ipairs(redis.call('ZDIFF', 2, unfinished, leases)) do
  redis.call('ZADD', leases, 0, member)
end
local found = {}
local members = redis.call('ZRANGEBYSCORE', leases, '-inf', '(' .. ARGV[2], 'LIMIT', 0, ARGV[3])
for _, member in ipairs(members) do
  local id = cjson.decode(member)
  local doc = redis.call('HGET', p .. 'claims:' .. id[1], id[2])
  if doc and redis.call('ZSCORE', unfinished, member) then
    table.insert(found, member)
    table.insert(found, doc)
  else
    redis.call('ZREM', leases, member)
  end
end
return found
"""

SWAP_CLAIMS = """
-- ARGV: prefix, then per claim 6 values: run_id, key, JSON read before, new JSON, member,
-- new lease score. Swaps each claim whose JSON is still the one read; returns 1/0 per claim.
local p = ARGV[1]
local swapped = {}
for i = 2, #ARGV, 6 do
  local hash = p .. 'claims:' .. ARGV[i]
  if redis.call('HGET', hash, ARGV[i + 1]) == ARGV[i + 2] then
    redis.call('HSET', hash, ARGV[i + 1], ARGV[i + 3])
    redis.call('ZADD', p .. 'claims:leases', ARGV[i + 5], ARGV[i + 4])
    table.insert(swapped, 1)
  else
    table.insert(swapped, 0)
  end
end
return swapped
"""

ADD_APPROVAL = """
-- KEYS[1] the run's claims hash, KEYS[2] the run's approvals hash
-- ARGV: claim key, approval field, approval JSON
-- Returns {'claimed', claim JSON, approvals...} or {'added' | 'again', approvals...}.
local claim = redis.call('HGET', KEYS[1], ARGV[1])
local head
if claim then
  head = {'claimed', claim}
elseif redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 1 then
  head = {'added'}
else
  head = {'again'}
end
for _, doc in ipairs(redis.call('HVALS', KEYS[2])) do
  table.insert(head, doc)
end
return head
"""

LOAD_RUN = """
-- KEYS: the run's snapshot hash, claims hash, approvals hash. One consistent read.
return {redis.call('HGET', KEYS[1], 'doc'), redis.call('HVALS', KEYS[2]),
        redis.call('HVALS', KEYS[3])}
"""

AUDIT_EVENTS = """
-- append_audit(p, audit): each {doc, score, indexes} gets the next sequence number, is stored
-- under it and indexed by it in each of its index zsets.
local function append_audit(p, audit)
  for _, e in ipairs(audit) do
    local seq = string.format('%020d', redis.call('INCR', p .. 'audit:seq'))
    redis.call('HSET', p .. 'audit:events', seq, e.doc)
    for _, index in ipairs(e.indexes) do
      redis.call('ZADD', index, e.score, seq)
    end
  end
end
"""
"""A Lua fragment (prepended to ``COMMIT`` and the edge's card write) defining ``append_audit``."""

APPEND_AUDIT = """
-- KEYS[1] sequence counter, KEYS[2] events hash, KEYS[3..] index zsets
-- ARGV: event JSON, score
local seq = string.format('%020d', redis.call('INCR', KEYS[1]))
redis.call('HSET', KEYS[2], seq, ARGV[1])
for i = 3, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[2], seq)
end
return seq
"""

COMMIT = (
    _SNAPSHOTS
    + AUDIT_EVENTS
    + GRANT_WRITES
    + """
-- ARGV: prefix, change JSON (built by storage.redis._change.payload; scores as strings).
-- Every check runs before the first write, so a refused change writes nothing.
-- Returns {'ok'}, {'claimed', claim JSON}, {'changed'} (a completed claim is not as this
-- change expects it: read it and send it again), {'missing', index}, {'fenced', index, claim
-- JSON} (a completion's owner or epoch is no longer the claim's), {'conflict'} or {'grant',
-- why, index} (the standing grant of that use may not be used now).
local CLAIMED_TAIL = ',"status":"claimed","outcome":null,"completed_at":null,"owner":'

-- The claim JSON ``cur`` completed with ``outcome`` and ``at`` (JSON texts), as
-- storage._codec would write it: the fields after ``detail`` are always status, outcome,
-- completed_at, owner, lease_until, epoch, and no JSON string can hold an unescaped quote,
-- so the last match of CLAIMED_TAIL is those fields. nil when the claim is not claimed.
local function completed_in_place(cur, outcome, at)
  local found, from = nil, 1
  while true do
    local i = string.find(cur, CLAIMED_TAIL, from, true)
    if not i then break end
    found, from = i, i + 1
  end
  if not found then
    return nil
  end
  return string.sub(cur, 1, found - 1) .. ',"status":"completed","outcome":' .. outcome
    .. ',"completed_at":' .. at .. ',"owner":' .. string.sub(cur, found + #CLAIMED_TAIL)
end

local p = ARGV[1]
local c = cjson.decode(ARGV[2])
for _, claim in ipairs(c.claims) do
  local held = redis.call('HGET', claim.hash, claim.key)
  if held then
    return {'claimed', held}
  end
end
local afters = {}
for i, done in ipairs(c.completions) do
  local cur = redis.call('HGET', done.hash, done.key)
  if not cur then
    if done.before and done.before ~= '' then
      return {'changed'}
    end
    return {'missing', tostring(i)}
  end
  if done.owner then  -- fenced: only the claim's current owner at its current epoch
    local held = cjson.decode(cur)
    if held.owner ~= done.owner or (tonumber(held.epoch) or 0) ~= tonumber(done.epoch) then
      return {'fenced', tostring(i), cur}
    end
  end
  if done.before then  -- the caller read the claim and completed it itself
    if cur ~= done.before then
      return {'changed'}
    end
    afters[i] = done.after
  else
    afters[i] = completed_in_place(cur, done.outcome, done.at)
    if not afters[i] then
      return {'changed'}
    end
  end
end
if c.snapshot and not snapshot_fits(c.snapshot.key, c.snapshot.expected) then
  return {'conflict'}
end
local unusable = grant_refusal(c.grant_uses)
if unusable then
  return unusable
end
for _, claim in ipairs(c.claims) do
  redis.call('HSET', claim.hash, claim.key, claim.doc)
  if claim.unfinished then
    redis.call('ZADD', p .. 'claims:unfinished', claim.score, claim.member)
    redis.call('ZADD', p .. 'claims:leases', claim.lease, claim.member)
  end
end
for i, done in ipairs(c.completions) do
  redis.call('HSET', done.hash, done.key, afters[i])
  redis.call('ZREM', p .. 'claims:unfinished', done.member)
  redis.call('ZREM', p .. 'claims:leases', done.member)
end
if c.snapshot then
  write_snapshot(p, c.snapshot)
end
if c.delete then
  delete_snapshot(p, c.delete)
end
if c.thread then
  redis.call('SET', c.thread.key, c.thread.doc)
end
for _, m in ipairs(c.messages) do
  redis.call('RPUSH', m.key, m.doc)
end
append_audit(p, c.audit)
write_grants(p, c)
return {'ok'}
"""
)

COMMIT_BATCH = (
    AUDIT_EVENTS
    + """
-- ARGV: prefix, batch JSON {approvals: [{claims, approvals, key, field, doc}], claims:
-- [{hash, key, doc, unfinished, score, member, lease}], audit: [...]}.
-- Every check runs before the first write, so a refused batch writes nothing.
-- Returns {'ok'}, {'claimed', index in the batch's approvals then claims, claim JSON} or
-- {'again', index} (an approval its approver gave already).
local p = ARGV[1]
local b = cjson.decode(ARGV[2])
for i, a in ipairs(b.approvals) do
  local held = redis.call('HGET', a.claims, a.key)
  if held then
    return {'claimed', tostring(i), held}
  end
  if redis.call('HEXISTS', a.approvals, a.field) == 1 then
    return {'again', tostring(i)}
  end
end
for i, c in ipairs(b.claims) do
  local held = redis.call('HGET', c.hash, c.key)
  if held then
    return {'claimed', tostring(#b.approvals + i), held}
  end
end
for _, a in ipairs(b.approvals) do
  redis.call('HSET', a.approvals, a.field, a.doc)
end
for _, c in ipairs(b.claims) do
  redis.call('HSET', c.hash, c.key, c.doc)
  if c.unfinished then
    redis.call('ZADD', p .. 'claims:unfinished', c.score, c.member)
    redis.call('ZADD', p .. 'claims:leases', c.lease, c.member)
  end
end
append_audit(p, b.audit)
return {'ok'}
"""
)
