"""PostgreSQL cut off while an approved tool runs, back 4 s later (lease 3 s): the tool's outcome
is written once, the run finishes with it, and nothing says interrupted, though another
instance looks for lapsed claims all along (SPEC 3.4: the owner retries every fraction of a
lease; recovery grants one more lease of grace).

The outage is a TCP proxy of this test in front of the shared server: cutting it drops every
connection and refuses new ones, as a stopped server does, without touching the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy.engine import make_url

from agents import Agent, AgentStream
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import SQLStorage, StorageUnavailable
from tests.backends import POSTGRES_ENV, unique_url
from tools import ToolContext, create_tool

pytestmark = [
    pytest.mark.processes,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}"),
]

LEASE = 3.0
OUTAGE = 4.0


class CuttableProxy:
    """Forwards a loopback port to the server; ``cut`` is an outage, ``restore`` its end."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._pipe, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._open):
            writer.transport.abort()
        await self._server.wait_closed()
        self._server = None

    async def restore(self) -> None:
        await self.start()

    async def _pipe(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(*self.target)
        except OSError:
            client_w.transport.abort()
            return
        self._open |= {client_w, server_w}

        async def copy(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            w.transport.abort()

        await asyncio.gather(copy(client_r, server_w), copy(server_r, client_w))
        self._open -= {client_w, server_w}


@pytest.fixture
async def proxied_url(tmp_path: Path) -> AsyncIterator[tuple[str, CuttableProxy]]:
    async with unique_url("postgres", tmp_path) as url:
        parsed = make_url(url)
        proxy = CuttableProxy(parsed.host or "127.0.0.1", parsed.port or 5432)
        await proxy.start()
        try:
            yield parsed.set(port=proxy.port).render_as_string(hide_password=False), proxy
        finally:
            await proxy.cut()


class Target(BaseModel):
    id: str


async def test_a_tool_that_ran_through_an_outage_has_its_outcome_written_never_interrupted(
    proxied_url: tuple[str, CuttableProxy],
) -> None:
    url, proxy = proxied_url
    store = SQLStorage(url)
    ran: list[str] = []
    outage: list[asyncio.Task[None]] = []

    async def delete(input: Target, ctx: ToolContext) -> dict[str, Any]:
        await proxy.cut()  # storage goes away while the tool runs ...

        async def back_later() -> None:
            await asyncio.sleep(OUTAGE)
            await proxy.restore()  # ... and comes back after one lease and a third

        outage.append(asyncio.create_task(back_later()))
        await asyncio.sleep(LEASE / 3)  # still running when a renewal is due (it fails)
        ran.append(input.id)
        return {"deleted": input.id}

    tool = create_tool(
        id="delete-record",
        description="Delete",
        input_schema=Target,
        execute=delete,
        require_approval=True,
    )

    def instance(script: list[Any]) -> Agent:
        return Agent(
            id="ops",
            model=ScriptedModel(script),
            tools=[tool],
            storage=store,
            memory=Memory(storage=store),
            claim_lease_seconds=LEASE,
        )

    other = instance([reply("Interrupted, outcome unknown.")])  # another instance's recovery
    recovered: list[AgentStream] = []

    async def recover_all_along() -> None:
        while True:
            with contextlib.suppress(StorageUnavailable):
                recovered.extend(await other.recover_interrupted_runs())
            await asyncio.sleep(LEASE / 6)

    try:
        first = await instance([call("delete-record", {"id": "42"}, id="c1")]).generate(
            "delete 42", thread_id="t1"
        )
        looking = asyncio.create_task(recover_all_along())
        try:
            done = await instance([reply("Deleted 42.")]).approve_tool_call_generate(
                run_id=first.run_id, decided_by="U2"
            )
            await outage[0]
            await asyncio.sleep(LEASE)  # and well past the grace: nothing left to take over
        finally:
            looking.cancel()
            await asyncio.gather(looking, return_exceptions=True)

        assert done.finish_reason == "stop" and done.text == "Deleted 42."
        assert ran == ["42"] and recovered == []
        snapshot, claims, _ = await store.load_run(first.run_id)
        assert snapshot is None
        [claim, answer] = claims  # the call's, and the one that leased the answer after it
        assert answer.decision == "continued" and answer.status == "completed"
        assert claim.status == "completed" and claim.epoch == 0  # never taken over
        assert claim.outcome is not None and claim.outcome["status"] == "ok"
        audit = await store.query_audit(run_id=first.run_id)
        [executed] = [e for e in audit if e.kind == "executed"]
        assert executed.data["status"] == "ok"
        assert "recovered" not in {e.kind for e in audit}
        told = [m.content for m in await store.list_messages("t1") if m.role == "tool"]
        assert len(told) == 1 and "interrupted" not in str(told)
    finally:
        for task in outage:
            await task
        await store.close()
