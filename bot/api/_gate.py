"""``POST /api/gate`` (SPEC 17): a coding agent's hook asks whether one of its tool calls may run.

The API only carries the question: whoever mounts it passes a ``Gate`` (the bot passes its
gateway), as it passes the ``DecisionObserver``. Only a person's token (``API_TOKENS``) may ask:
the call is requested by that person, so the service token gets 403. Without a gateway the
route answers 404 saying how to turn it on.

Example:
    >>> async def gate(person: str, asked: GateRequest) -> GateOut:
    ...     return GateOut(status="allowed")
    >>> add_api_routes(web_app, agents, access, gate=gate)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from aiohttp import web
from pydantic import Field

import bot.api._errors as api_errors
from bot.api._guard import CALLER
from bot.api._input import Problem, json_body, parse
from bot.api._schemas import MAX_ID_LENGTH, MAX_REASON_LENGTH, Id, _Request, _Wire

GATE = "/gate"
"""The route under ``/api``."""
MAX_WAIT_SECONDS = 900.0
"""The longest ``waitSeconds`` one request may hold (a hook asks again to wait longer)."""
GATEWAY_OFF = (
    "the gateway is off on this bot: start it with GATEWAY=true (or `python -m bot gateway`)"
)
SERVICE_TOKEN = (
    "the gate needs a person's token (one of API_TOKENS): the call is requested by that person, "
    "and the service token (API_TOKEN) is no one"
)

ToolName = Annotated[
    str, Field(min_length=1, max_length=MAX_ID_LENGTH, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
"""A client's tool name (``Bash``, ``Write``, ``mcp__github__create_issue``)."""


class GateRequest(_Request):
    """Body of ``POST /api/gate``: one tool call a coding agent is about to make."""

    tool: ToolName
    """The client's tool name; policy rules match it (``tools = ["Bash"]``)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments (Claude Code's ``tool_input``); ``args_match`` rules match them."""
    session: Id | None = None
    """The client's session: an identical call (same person, session, tool and arguments)
    waits on the same card."""
    call_id: Id | None = None
    """The client's own id of the call (Claude Code's ``tool_use_id``), for the audit."""
    client: Annotated[str, Field(min_length=1, max_length=100)] = "coding agent"
    """The client's name, shown on the card (``claude-code``)."""
    cwd: Annotated[str, Field(max_length=MAX_REASON_LENGTH)] | None = None
    """The directory the client works in, shown on the card."""
    wait_seconds: float = Field(default=0.0, ge=0, le=MAX_WAIT_SECONDS, allow_inf_nan=False)
    """How long to wait for a decision before answering ``pending`` (ask again to wait on)."""


GateStatus = Literal["allowed", "approved", "declined", "expired", "pending"]
"""``allowed``: no rule holds the call; ``approved``: a person approved it (given once);
``declined``; ``expired``; ``pending``: still undecided (ask again)."""


class GateOut(_Wire):
    """Answer of ``POST /api/gate``."""

    status: GateStatus
    decided_by: str | None = None
    """Who approved or declined it."""
    reason: str | None = None
    """Why it was declined, or what the hook should tell the coding agent."""
    card: str | None = None
    """A link to the call's card in Slack, when it has one."""
    call_id: str | None = None
    """The countersign tool call id of the pending call (with ``runId``)."""
    run_id: str | None = None
    """The run of the pending call."""


class Gate(Protocol):
    """Answers one gate request for ``person`` (the token's user)."""

    async def __call__(self, person: str, asked: GateRequest, /) -> GateOut: ...


def add_gate_route(api: web.Application, gate: Gate | None) -> None:
    """Mount ``POST /gate`` on the ``/api`` sub-application."""

    async def handle(request: web.Request) -> web.Response:
        if gate is None:
            raise Problem(404, api_errors.NOT_FOUND, GATEWAY_OFF)
        caller = request[CALLER]
        if caller.user is None:
            raise Problem(403, api_errors.PERSON_TOKEN_REQUIRED, SERVICE_TOKEN)
        asked = parse(GateRequest, await json_body(request))
        answer = await gate(caller.user, asked)
        return web.json_response(text=answer.model_dump_json(by_alias=True, exclude_none=True))

    api.router.add_post(GATE, handle)
