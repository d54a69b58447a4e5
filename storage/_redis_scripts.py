"""Lua scripts that make ``RedisStorage``'s multi-key writes atomic.

Each script receives the key prefix as ``ARGV[1]`` and builds index key names itself, so it
needs a single Redis (not Redis Cluster). Optional ids travel as ``""`` for None and
``"=" .. id`` otherwise, so an empty-string id stays distinct from a missing one.
"""

from __future__ import annotations

_UNINDEX_SNAPSHOT = """
local function unindex(p, run, cur)
  redis.call('ZREM', p .. 'snaps:all', run)
  redis.call('ZREM', p .. 'snaps:agent:' .. cur[2], run)
  if cur[3] and cur[3] ~= '' then
    redis.call('ZREM', p .. 'snaps:thread:' .. string.sub(cur[3], 2), run)
  end
  if cur[4] and cur[4] ~= '' then
    redis.call('ZREM', p .. 'snaps:resource:' .. string.sub(cur[4], 2), run)
  end
end
"""

SAVE_SNAPSHOT = (
    _UNINDEX_SNAPSHOT
    + """
-- KEYS[1] snapshot hash
-- ARGV: prefix, run_id, expected stored version, new version, doc, agent, thread, resource, score
local p, run = ARGV[1], ARGV[2]
local cur = redis.call('HMGET', KEYS[1], 'version', 'agent', 'thread', 'resource')
local stored = tonumber(cur[1]) or 0
if stored ~= tonumber(ARGV[3]) then
  return 0
end
if cur[1] then
  unindex(p, run, cur)
end
redis.call('HSET', KEYS[1], 'version', ARGV[4], 'doc', ARGV[5], 'agent', ARGV[6],
           'thread', ARGV[7], 'resource', ARGV[8])
local score = ARGV[9]
redis.call('ZADD', p .. 'snaps:all', score, run)
redis.call('ZADD', p .. 'snaps:agent:' .. ARGV[6], score, run)
if ARGV[7] ~= '' then
  redis.call('ZADD', p .. 'snaps:thread:' .. string.sub(ARGV[7], 2), score, run)
end
if ARGV[8] ~= '' then
  redis.call('ZADD', p .. 'snaps:resource:' .. string.sub(ARGV[8], 2), score, run)
end
return 1
"""
)

DELETE_SNAPSHOT = (
    _UNINDEX_SNAPSHOT
    + """
-- KEYS[1] snapshot hash; ARGV: prefix, run_id
local cur = redis.call('HMGET', KEYS[1], 'version', 'agent', 'thread', 'resource')
if cur[1] then
  unindex(ARGV[1], ARGV[2], cur)
  redis.call('DEL', KEYS[1])
end
return 1
"""
)

CLAIM = """
-- KEYS[1] the run's claims hash, KEYS[2] the unfinished-claims zset
-- ARGV: claim key, claim JSON, 1 when unfinished, score, unfinished member
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  if ARGV[3] == '1' then
    redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  end
  return false
end
return redis.call('HGET', KEYS[1], ARGV[1])
"""

COMPLETE_CLAIM = """
-- KEYS[1] the run's claims hash, KEYS[2] the unfinished-claims zset
-- ARGV: claim key, JSON read before, new JSON, unfinished member
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then
  return -1
end
if cur ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[4])
return 1
"""

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
