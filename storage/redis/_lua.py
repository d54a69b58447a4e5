"""Lua shared by the listing scripts (``storage.redis._listing``, ``storage.redis._due``)."""

DOCS_OF_RUNS = """
local docs = {}
for i = 1, #runs do
  docs[i] = redis.call('HGET', p .. 'snap:' .. runs[i], 'doc') or ''
end
return docs
"""
"""The tail of a listing script: the stored document of each run in ``runs`` ('' for one
gone), in order (``p``: the key prefix)."""
