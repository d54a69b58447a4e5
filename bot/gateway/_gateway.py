"""``Gateway``: one client's tool call through the one gate, and the wait for its outcome.

``Gateway.ask`` is what both doors of SPEC 17 call: the MCP endpoint's ``tools/call`` and the
coding-agent hook's ``POST /api/gate``. The call is one run of the gateway agent (agent id
``gateway``, requested by the person the client's token identifies):

- not held (the gate lets it through, or a standing grant approves it): it runs at once and
  ``Answer.result`` is what its tool returned (an MCP server's whole ``CallToolResult``);
- held: it is a pending call like any other; it is registered under its ``call_key`` (so an
  identical call waits on it instead of asking twice), its card is posted (``Presenter``), and
  the request waits for its outcome up to its hold, reading storage (``bot.gateway._waiting``).
  Whoever decides it, wherever, the tool runs once, in the instance that took the decision.

Example:
    >>> answer = await gateway.ask(Ask(person="U1", tool="ops_delete_ticket",
    ...                                args={"ticket_id": "T-1"}, origin=origin,
    ...                                wait_seconds=45))  # doctest: +SKIP
    >>> answer.status
    'pending'
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Literal, Protocol

import bot.gateway._messages as msg
from agents import (
    Agent,
    Decline,
    PendingToolCall,
    ToolCallApprovalChunk,
    ToolCallGrantedChunk,
    ToolResultChunk,
    fingerprint,
)
from agents.errors import AgentError
from bot.gateway._model import CallKind, call_message
from bot.gateway._tools import GatewayTools
from bot.gateway._waiting import CallRef, CallState, Wakeups, call_key, read_state, used_key
from storage import utcnow

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0
"""How often a wait reads its call's state (a decision in another instance is seen then)."""
RUNNING_POLL_SECONDS = 0.05
"""How often it reads while the approved tool runs (its outcome is written right after)."""
NO_TTL_KEEP_SECONDS = 30 * 86400.0
"""How long identical calls share a call stored without a TTL."""
WITHDRAWN_DUPLICATE = "an identical call was already waiting; this one waits on it"

Status = Literal["allowed", "approved", "declined", "expired", "pending", "failed"]
"""What became of a call: ran at once; approved by a person and ran; declined (or withdrawn);
expired; still waiting; allowed but its tool failed (or its outcome is unknown)."""


@dataclass(frozen=True, kw_only=True)
class Origin:
    """Where a gateway call came from (its card says so)."""

    kind: CallKind
    """``mcp``: an MCP client's ``tools/call``; ``hook``: a coding agent's hook."""
    client: str
    """The client's name (``claude-code``, an MCP client's ``clientInfo.name``)."""
    server: str | None = None
    """For an MCP call: the upstream server whose tool it is."""
    session: str | None = None
    """For a hook call: the coding agent's session id (identical calls are per session)."""
    client_call_id: str | None = None
    """The client's own id of the call (Claude Code's ``tool_use_id``)."""
    cwd: str | None = None
    """For a hook call: the directory the coding agent works in."""

    def context(self) -> dict[str, Any]:
        """As the run's ``request_context`` keeps it (audited with the run)."""
        return {"gateway": {k: v for k, v in vars(self).items() if v is not None}}

    def text(self) -> str:
        """What the card says about it (mrkdwn, the client's values escaped)."""
        if self.kind == "mcp":
            line = msg.ORIGIN_MCP.format(client=_plain(self.client), server=_code(self.server))
        else:
            line = msg.ORIGIN_HOOK.format(client=_plain(self.client))
        if self.session:
            line += msg.ORIGIN_SESSION.format(session=_code(self.session[:12]))
        if self.cwd:
            line += msg.ORIGIN_CWD.format(cwd=_code(self.cwd[-80:]))
        return line


@dataclass(frozen=True, kw_only=True)
class Ask:
    """One client call to put through the gate."""

    person: str
    """Who asks: the Slack user the client's token identifies (never the request body)."""
    tool: str
    """The tool's name as the gateway serves it (``<server>_<tool>``, or the client's name)."""
    args: dict[str, Any]
    """Its arguments."""
    origin: Origin
    wait_seconds: float
    """How long the request may wait for a decision (the hold)."""


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What became of an ``Ask`` (see ``Status``)."""

    status: Status
    result: dict[str, Any] | None = None
    """For ``allowed``/``approved`` MCP calls: the server's ``CallToolResult`` as JSON data."""
    error: str | None = None
    """For ``failed``: what went wrong."""
    decided_by: str | None = None
    """Who approved, declined or withdrew it."""
    reason: str | None = None
    """Why it was declined."""
    withdrawn: bool = False
    """Declined by its own requester."""
    interrupted: bool = False
    """For ``failed``: its outcome is unknown (the instance running it stopped)."""
    card: str | None = None
    """A link to the call's card, when it has one."""
    ref: CallRef | None = None
    """The pending call it waited on (None: it ran at once)."""


class Presenter(Protocol):
    """The Slack side of the gateway (``bot._serve`` passes the Slack implementation)."""

    async def present(self, run_id: str, call: PendingToolCall, origin: str) -> None:
        """Post the card of a held call (in ``GATEWAY_CHANNEL``) unless it has one, saying
        where it came from (``Origin.text``); never raises."""
        ...

    async def granted(self, chunk: ToolCallGrantedChunk, origin: str) -> None:
        """Say that a standing grant approved a call; never raises."""
        ...

    async def link(self, run_id: str, tool_call_id: str) -> str | None:
        """A link to the call's card (None: it has none yet)."""
        ...


@dataclass(kw_only=True)
class _Proposed:
    """What the proposing run showed: held, granted, or its tool's result."""

    run_id: str
    held: PendingToolCall | None = None
    granted: ToolCallGrantedChunk | None = None
    result: Any = None
    error: str | None = None


class Gateway:
    """Puts client calls through the gateway agent (see the module docstring)."""

    def __init__(
        self,
        agent: Agent,
        tools: GatewayTools,
        wakeups: Wakeups,
        presenter: Presenter | None = None,
        *,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.agent = agent
        self.tools = tools
        self._wakeups = wakeups
        self.presenter = presenter
        self._poll = poll_seconds

    async def ask(self, ask: Ask) -> Answer:
        """Put ``ask`` through the gate; wait at most ``ask.wait_seconds`` for a decision."""
        deadline = time.monotonic() + max(ask.wait_seconds, 0.0)
        session = ask.origin.session if ask.origin.kind == "hook" else None
        key = call_key(ask.person, ask.tool, fingerprint(ask.tool, ask.args), session)
        storage = self.agent.storage
        known = await storage.get_value(key)
        ref = CallRef.decode(known) if known else None
        if ref is not None and (await read_state(storage, ref)).status == "gone":
            await storage.delete_value(key)  # its run was pruned: asked anew
            ref = None
        if ref is None:
            if ask.origin.kind == "hook":
                self.tools.hook_tool(ask.tool)  # the tool standing for the client's, made once
            at_once = await self._at_once(ask)
            if at_once is not None:
                return at_once
            ran = await self._propose(ask)
            if ran.held is None:
                return self._ran_at_once(ran)
            ref = CallRef(run_id=ran.run_id, tool_call_id=ran.held.tool_call_id)
            ref = await self._register(ask, key, ref, ran.held)
        return await self._wait(ask, key, ref, deadline)

    async def _at_once(self, ask: Ask) -> Answer | None:
        """The answer of a call the gate holds nothing of, run with no run stored (the
        common case, kept cheap); None when it waits (or a grant may approve it)."""
        ran = await self.agent.run_if_ungated(
            ask.tool,
            ask.args,
            requested_by=ask.person,
            resource_id=f"gateway:{ask.person}",
            request_context=ask.origin.context(),
        )
        return None if ran is None else _executed("allowed", ran.result, None, None)

    async def _propose(self, ask: Ask) -> _Proposed:
        stream = await self.agent.stream(
            call_message(ask.origin.kind, ask.tool, ask.args),
            requested_by=ask.person,
            resource_id=f"gateway:{ask.person}",
            request_context=ask.origin.context(),
        )
        ran = _Proposed(run_id=stream.run_id)
        async for chunk in stream.full_stream:
            if isinstance(chunk, ToolCallApprovalChunk):
                ran.held = chunk.pending_call()
            elif isinstance(chunk, ToolCallGrantedChunk):
                ran.granted = chunk
            elif isinstance(chunk, ToolResultChunk):
                ran.result = chunk.result
        result = await stream.result()
        if result.finish_reason == "error":
            ran.error = str(result.error) if result.error is not None else "the run failed"
        if ran.granted is not None and self.presenter is not None:
            await self.presenter.granted(ran.granted, ask.origin.text())
        return ran

    def _ran_at_once(self, ran: _Proposed) -> Answer:
        status: Status = "approved" if ran.granted is not None else "allowed"
        by = ran.granted.granted_by if ran.granted is not None else None
        if ran.error is not None:
            return Answer(status="failed", error=ran.error, decided_by=by)
        return _executed(status, ran.result, by, None)

    async def _register(self, ask: Ask, key: str, ref: CallRef, call: PendingToolCall) -> CallRef:
        """Make ``ref`` the call identical asks wait on, and post its card; when an identical
        ask registered its own first, ours is withdrawn (it never got a card) and theirs is
        waited on."""
        storage = self.agent.storage
        if await storage.add_if_absent(key, ref.encode(), _keep_seconds(call)):
            if self.presenter is not None:
                await self.presenter.present(ref.run_id, call, ask.origin.text())
            return ref
        theirs = CallRef.decode(await storage.get_value(key) or "")
        try:
            await self.agent.decide(
                Decline(reason=WITHDRAWN_DUPLICATE, withdrawn=True),
                run_id=ref.run_id,
                tool_call_id=ref.tool_call_id,
                decided_by=ask.person,
            )
        except AgentError as exc:  # decided meanwhile (a grant, a quick click): ours stands
            logger.info("gateway: could not withdraw duplicate call %s: %s", ref.run_id, exc)
            return ref
        return theirs or ref

    async def _wait(self, ask: Ask, key: str, ref: CallRef, deadline: float) -> Answer:
        storage = self.agent.storage
        while True:
            state = await read_state(storage, ref)
            if state.ended:
                return await self._ended(ask, key, ref, state)
            left = deadline - time.monotonic()
            if left <= 0:
                return Answer(status="pending", card=await self._card(ask, ref), ref=ref)
            pause = RUNNING_POLL_SECONDS if state.status == "running" else self._poll
            await self._wakeups.wait(ref.run_id, min(pause, left))

    async def _ended(self, ask: Ask, key: str, ref: CallRef, state: CallState) -> Answer:
        """The ended call's answer. An approved MCP call's result stays shared by identical
        calls until its TTL; any other outcome is given to the asks waiting now and then
        forgotten (the next identical ask is asked anew), and an approved hook call is given
        as approved once."""
        storage = self.agent.storage
        card = await self._link(ref)
        if state.status == "approved" and ask.origin.kind == "hook":
            await self._forget(key, ref)
            if not await storage.add_if_absent(used_key(ref), "1", NO_TTL_KEEP_SECONDS):
                return await self.ask(ask)  # used already: this one is asked anew
            return Answer(status="approved", decided_by=state.decided_by, card=card, ref=ref)
        if state.status == "approved":
            outcome = state.outcome or {}
            if outcome.get("status") == "interrupted":
                answer = Answer(
                    status="failed", interrupted=True, decided_by=state.decided_by, ref=ref
                )
            else:
                answer = _executed("approved", outcome.get("result"), state.decided_by, ref)
            if answer.status == "failed":  # not a result to hand out again: asked anew
                await self._forget(key, ref)
            return replace(answer, card=card)
        await self._forget(key, ref)
        if state.status == "declined":
            return Answer(
                status="declined",
                decided_by=state.decided_by,
                reason=state.reason,
                withdrawn=state.withdrawn,
                card=card,
                ref=ref,
            )
        if state.status == "expired":
            return Answer(status="expired", card=card, ref=ref)
        return Answer(status="failed", error="gone", ref=ref)

    async def _forget(self, key: str, ref: CallRef) -> None:
        """Identical asks no longer share ``ref`` (the key is left alone when it already names
        a newer call)."""
        storage = self.agent.storage
        if CallRef.decode(await storage.get_value(key) or "") == ref:
            await storage.delete_value(key)

    async def _link(self, ref: CallRef) -> str | None:
        if self.presenter is None:
            return None
        return await self.presenter.link(ref.run_id, ref.tool_call_id)

    async def _card(self, ask: Ask, ref: CallRef) -> str | None:
        """The link to the pending call's card, posted now if it has none (its post failed,
        or its instance stopped before posting it)."""
        link = await self._link(ref)
        if link is not None or self.presenter is None:
            return link
        call = await self.agent.pending_call(run_id=ref.run_id, tool_call_id=ref.tool_call_id)
        if call is not None:
            await self.presenter.present(ref.run_id, call, ask.origin.text())
        return await self._link(ref)


def _executed(status: Status, result: Any, by: str | None, ref: CallRef | None) -> Answer:
    """The answer of a call whose tool ran: its result, or why it failed."""
    if isinstance(result, dict) and "error" in result and "content" not in result:
        return Answer(status="failed", error=str(result["error"]), decided_by=by, ref=ref)
    if isinstance(result, dict) and result.get("status") == "interrupted":
        return Answer(status="failed", interrupted=True, decided_by=by, ref=ref)
    data = result if isinstance(result, dict) else None
    return Answer(status=status, result=data, decided_by=by, ref=ref)


def _keep_seconds(call: PendingToolCall) -> float:
    """How long identical calls share ``call``: until it expires."""
    if call.expires_at is None:
        return NO_TTL_KEEP_SECONDS
    return max((call.expires_at - utcnow()) / timedelta(seconds=1), 1.0)


def _plain(text: str) -> str:
    """Client-given text, safe in mrkdwn (no mentions, links or formatting of its own)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")[:100]


def _code(text: str | None) -> str:
    return _plain(text or "").replace("`", "'")
