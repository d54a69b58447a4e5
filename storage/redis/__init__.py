"""``RedisStorage``: the protocol on ``redis.asyncio``: claims, changes as Lua scripts, pruning."""
