"""Where a peer without its own persistence layer keeps a suspended run's state between halves.

Used by the peers whose documented pause/resume flow hands the caller a serialized state to store
(the OpenAI Agents SDK's ``RunState`` string, Pydantic AI's message history JSON): a dict for
in-memory storage, or one row of a SQLite table on its own ``aiosqlite`` connection with
countersign's pragmas (WAL, synchronous NORMAL), one transaction per write. Runs in the peers'
virtual environment; imports ``aiosqlite`` (a LangGraph dependency there) and the standard library.
"""

from __future__ import annotations

from typing import Protocol

import aiosqlite
from _peer_timing import SQLITE_PRAGMAS  # type: ignore[import-not-found]  # a sibling script


class States(Protocol):
    async def save(self, key: str, value: str) -> None: ...
    async def load(self, key: str) -> str: ...
    async def delete(self, key: str) -> None: ...
    async def close(self) -> None: ...


class MemoryStates:
    def __init__(self) -> None:
        self._states: dict[str, str] = {}

    async def save(self, key: str, value: str) -> None:
        self._states[key] = value

    async def load(self, key: str) -> str:
        return self._states[key]

    async def delete(self, key: str) -> None:
        del self._states[key]

    async def close(self) -> None:
        pass


class SqliteStates:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    @classmethod
    async def open(cls, path: str) -> SqliteStates:
        conn = await aiosqlite.connect(path)
        for pragma in SQLITE_PRAGMAS:
            await conn.execute(pragma)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS run_states (run_id TEXT PRIMARY KEY, state TEXT NOT NULL)"
        )
        await conn.commit()
        return cls(conn)

    async def save(self, key: str, value: str) -> None:
        await self._conn.execute("INSERT INTO run_states VALUES (?, ?)", (key, value))
        await self._conn.commit()

    async def load(self, key: str) -> str:
        async with self._conn.execute(
            "SELECT state FROM run_states WHERE run_id = ?", (key,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise KeyError(key)
        return str(row[0])

    async def delete(self, key: str) -> None:
        await self._conn.execute("DELETE FROM run_states WHERE run_id = ?", (key,))
        await self._conn.commit()

    async def close(self) -> None:
        await self._conn.close()


async def open_states(storage: str, path: str) -> States:
    """``memory`` → a dict, ``sqlite`` → the SQLite file at ``path``."""
    return MemoryStates() if storage == "memory" else await SqliteStates.open(path)
