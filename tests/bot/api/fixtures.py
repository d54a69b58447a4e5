"""Helpers of the HTTP API tests: a bare aiohttp app with ``/api`` on 127.0.0.1, scripted agents.

The app is ``web.Application()`` plus ``add_api_routes`` only (no Slack app factory), so the API
is tested on its own. ``ApiHarness`` holds the test client, the agent, its store and what its
tools really executed.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import BaseModel

from agents import Agent, RunResult
from agents.models import ScriptedModel, ScriptItem, call
from bot.api import ApiAccess, add_api_routes
from storage import Storage
from tools import Tool, ToolContext, create_tool

TOKEN = "test-api-token-0123456789"
AGENT_ID = "ops"


class RecordInput(BaseModel):
    id: str


class TicketInput(BaseModel):
    title: str


class Question(BaseModel):
    question: str


class Priority(BaseModel):
    priority: Literal["low", "high"]


@dataclass
class Executions:
    """Every real execution of a test tool: what approvals must guard."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def of(self, tool: str) -> list[dict[str, Any]]:
        return [args for name, args in self.calls if name == tool]


def api_tools(executions: Executions) -> list[Tool]:
    """``delete-record`` (needs approval) and ``open-ticket`` (suspends to ask a priority)."""

    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        executions.calls.append(("delete-record", input.model_dump()))
        return {"deleted": input.id}

    async def ticket(input: TicketInput, ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "Which priority: low or high?"})
        executions.calls.append(
            ("open-ticket", {**input.model_dump(), **ctx.resume_data.model_dump()})
        )
        return {"ticket": "T-1", "priority": ctx.resume_data.priority}

    return [
        create_tool(
            id="delete-record",
            description="Delete a record by id",
            input_schema=RecordInput,
            require_approval=True,
            execute=delete,
        ),
        create_tool(
            id="open-ticket",
            description="Open a ticket",
            input_schema=TicketInput,
            suspend_schema=Question,
            resume_schema=Priority,
            execute=ticket,
        ),
    ]


def delete_call(record: str, call_id: str) -> ScriptItem:
    return call("delete-record", {"id": record}, id=call_id)


def ticket_call(title: str, call_id: str) -> ScriptItem:
    return call("open-ticket", {"title": title}, id=call_id)


@dataclass
class ApiHarness:
    """A served agent and a test client for its ``/api``."""

    client: TestClient[Any, Any]
    agent: Agent
    model: ScriptedModel
    store: Storage
    executions: Executions

    def url(self, path: str) -> str:
        return str(self.client.make_url(path))

    @property
    def base_url(self) -> str:
        return str(self.client.make_url("")).rstrip("/")

    async def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        data: str | bytes | IO[bytes] | None = None,
        params: dict[str, str] | None = None,
        token: str | None = TOKEN,
        headers: dict[str, str] | None = None,
    ) -> ClientResponse:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        kwargs: dict[str, Any] = {"params": params, "headers": sent}
        if json is not None:
            kwargs["json"] = json
        elif data is not None:
            kwargs["data"] = data
        return await self.client.request(method, path, **kwargs)

    async def suspend(self, message: str = "go", **options: Any) -> RunResult:
        """Start a run; it stops at the scripted call's approval or suspension."""
        result = await self.agent.generate(message, **options)
        assert result.finish_reason == "suspended", result
        return result

    async def settle(self) -> None:
        """Wait for every run the agent continues in the background."""
        await self.agent.drain()


def make_agent(
    store: Storage, executions: Executions, script: Sequence[ScriptItem]
) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(list(script))
    agent = Agent(id=AGENT_ID, model=model, tools=api_tools(executions), storage=store)
    return agent, model


def tokens_file(folder: Path, people: dict[str, str]) -> str:
    """An ``API_TOKENS`` file in ``folder`` giving each token (key) to its user (value)."""
    path = folder / "api-tokens.toml"
    entries = [
        f'[[tokens]]\nuser = "{user}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"'
        for token, user in people.items()
    ]
    path.write_text("\n\n".join(entries) + "\n")
    return str(path)


def trusted(token: str | None) -> ApiAccess | None:
    """A service token whose ``decidedBy`` is the decider (``API_TOKEN_ACTS_FOR_USERS=true``):
    the API's own tests send the person deciding as ``decidedBy``."""
    return None if not token else ApiAccess.service(token, acts_for_users=True)


@asynccontextmanager
async def serve(
    agents: dict[str, Agent], token: str | None = TOKEN, access: ApiAccess | None = None
) -> AsyncIterator[TestClient[Any, Any]]:
    """A bare ``web.Application`` with ``/api`` on 127.0.0.1: ``access`` when given, else
    ``token`` as a trusted service token (none: the API is off)."""
    app = web.Application()
    add_api_routes(app, agents, access or trusted(token))
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield client


@asynccontextmanager
async def api_harness(
    store: Storage,
    script: Sequence[ScriptItem],
    token: str | None = TOKEN,
    access: ApiAccess | None = None,
) -> AsyncIterator[ApiHarness]:
    executions = Executions()
    agent, model = make_agent(store, executions, script)
    async with serve({agent.id: agent}, token, access) as client:
        yield ApiHarness(
            client=client, agent=agent, model=model, store=store, executions=executions
        )
        await agent.drain()
