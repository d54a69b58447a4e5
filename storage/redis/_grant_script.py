"""The Lua of a state change's standing grants, a part of ``COMMIT`` (``storage.redis._scripts``)
laid out as ``storage.redis._grants`` describes.

``grant_refusal`` checks every use of the change before anything is written, each counting the
uses of the same grant before it in the change (a grant with one use left refuses a change
that uses it twice); ``write_grants`` stores the new grant and counts the uses, and the use
that takes the last one ends the grant (``ended``).
"""

from __future__ import annotations

from storage.redis._grants import ENDED

GRANT_WRITES = (
    ENDED
    + """
-- uses: [{key, id, at}] in order (or nil). {'grant', why, index} for the first use that may
-- not happen (revoked, expired, or past max_uses with the uses before it), else nil.
local function grant_refusal(uses)
  local taken = {}
  for i, u in ipairs(uses or {}) do
    local g = redis.call('HMGET', u.key, 'uses', 'max_uses', 'expires', 'revoked')
    if not g[1] then
      return {'grant', 'there is no such grant', tostring(i)}
    end
    if g[4] and g[4] ~= '' then
      return {'grant', 'it was revoked', tostring(i)}
    end
    if tonumber(u.at) >= tonumber(g[3]) then
      return {'grant', 'it expired', tostring(i)}
    end
    taken[u.key] = (taken[u.key] or 0) + 1
    if tonumber(g[1]) + taken[u.key] > tonumber(g[2]) then
      return {'grant', 'every use of it was taken', tostring(i)}
    end
  end
  return nil
end

-- c.grant (a new grant, indexed) and c.grant_uses (each counted), after grant_refusal.
local function write_grants(p, c)
  if c.grant then
    local g = c.grant
    redis.call('HSET', g.key, 'doc', g.doc, 'uses', g.uses, 'max_uses', g.max_uses,
      'expires', g.expires, 'revoked', g.revoked, 'created', g.score,
      'indexes', cjson.encode(g.indexes), 'live', cjson.encode(g.live))
    redis.call('ZADD', p .. 'grants', g.score, g.id)
    for _, index in ipairs(g.indexes) do
      redis.call('ZADD', index, g.score, g.id)
    end
    if g.ended == '' then
      for _, index in ipairs(g.live) do
        redis.call('ZADD', index, g.expires, g.id)
      end
    else
      redis.call('ZADD', p .. 'grants:ended', g.ended, g.id)
    end
  end
  for _, u in ipairs(c.grant_uses or {}) do  -- the use that takes the last one ends the grant
    local uses = redis.call('HINCRBY', u.key, 'uses', 1)
    local g = redis.call('HMGET', u.key, 'max_uses', 'created')
    if uses >= tonumber(g[1]) and g[2] then
      ended(p, u.id, u.key, tonumber(g[2]))
    end
  end
end
"""
)
