"""Coordination across instances: each Slack delivery once (de-duplication marks) and one Slack
thread at a time (thread locks), in this process or shared through Redis (``REDIS_URL``).

``shared_coordination(redis_url)`` gives the ``Shared`` pair (a ``Deduper`` and ``ThreadLocks``)
every instance of the bot uses; without Redis, marks live in storage and locks in this process.
"""

from bot.coordination._dedupe import Deduper, Marks
from bot.coordination._locks import LocalThreadLocks, ThreadLocks
from bot.coordination._redis import RedisMarks, RedisThreadLocks, Shared, shared_coordination

__all__ = [
    "Deduper",
    "LocalThreadLocks",
    "Marks",
    "RedisMarks",
    "RedisThreadLocks",
    "Shared",
    "ThreadLocks",
    "shared_coordination",
]
