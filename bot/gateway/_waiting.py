"""Waiting for a held gateway call's outcome, in any instance (SPEC 17).

A held call is a pending call of the gateway agent; whoever decides it (a click on any instance,
the API, a grant, the expiry sweep) claims it in storage, and the instance that takes the
decision runs the tool. So a client's request waits by reading the call's stored state:
``read_state`` is one read of the run (its snapshot and claims). ``Wakeups`` is told by the
gateway agent's observer when a decision or an execution happened in this process, so a wait
here ends at once; a decision in another instance is seen at the next poll.

Identical calls share one pending call through storage's key→value store: ``call_key`` (who,
which tool, which arguments, and for the hook which session) holds the ``CallRef`` of the call.

Example:
    >>> state = await read_state(storage, CallRef(run_id="r1", tool_call_id="mcp-call"))
    >>> state.status  # doctest: +SKIP
    'pending'
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from agents import DecisionTaken, Observer, ToolExecuted
from storage import Storage

FINAL_DECISIONS = ("approved", "declined", "expired")
"""The claims that end a call (a call presented again has a ``redefined`` / ``edited`` claim
for the round it replaced, and waits on)."""

CallStatus = Literal["pending", "running", "approved", "declined", "expired", "gone"]
"""Where a held call is: waiting for a person; approved and its tool running; approved and
done; declined (or withdrawn); expired; gone (its run is no longer stored)."""


@dataclass(frozen=True, kw_only=True)
class CallRef:
    """Which pending call a client's call waits on."""

    run_id: str
    tool_call_id: str

    def encode(self) -> str:
        """As kept in storage's key→value store."""
        return json.dumps({"run": self.run_id, "call": self.tool_call_id})

    @classmethod
    def decode(cls, text: str) -> CallRef | None:
        """The reference kept in ``text`` (None: not one)."""
        try:
            data = json.loads(text)
            return cls(run_id=str(data["run"]), tool_call_id=str(data["call"]))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True, kw_only=True)
class CallState:
    """A held call as storage has it now."""

    status: CallStatus
    decided_by: str | None = None
    """Who approved (the last of a quorum), declined or withdrew it."""
    reason: str | None = None
    """Why it was declined."""
    withdrawn: bool = False
    """Declined by its own requester."""
    outcome: dict[str, Any] | None = None
    """For ``approved``: what running its tool came to (``{"status", "result"}``)."""

    @property
    def ended(self) -> bool:
        """Nothing more will happen to the call."""
        return self.status not in ("pending", "running")


def call_key(person: str, tool: str, fingerprint: str, session: str | None) -> str:
    """The key identical calls share (the person, the tool, the arguments' fingerprint, and
    for the hook the client's session)."""
    scope = hashlib.sha256((session or "").encode("utf-8")).hexdigest()[:16] if session else "-"
    return f"gateway:call:{person}:{scope}:{tool}:{fingerprint}"


def used_key(ref: CallRef) -> str:
    """Marks an approved hook call as returned (``allow`` is given once)."""
    return f"gateway:used:{ref.run_id}:{ref.tool_call_id}"


async def read_state(storage: Storage, ref: CallRef) -> CallState:
    """The call's state, from one read of its run."""
    snapshot, claims, _ = await storage.load_run(ref.run_id)
    final = [
        c for c in claims if c.tool_call_id == ref.tool_call_id and c.decision in FINAL_DECISIONS
    ]
    if final:
        claim = final[-1]
        detail = claim.detail or {}
        if claim.decision == "approved":
            if claim.status != "completed" or claim.outcome is None:
                return CallState(status="running", decided_by=claim.decided_by)
            return CallState(status="approved", decided_by=claim.decided_by, outcome=claim.outcome)
        if claim.decision == "declined":
            reason = detail.get("reason")
            return CallState(
                status="declined",
                decided_by=claim.decided_by,
                reason=str(reason) if reason else None,
                withdrawn=bool(detail.get("withdrawn")),
            )
        return CallState(status="expired")
    return CallState(status="pending" if snapshot is not None else "gone")


class Wakeups:
    """Waits that end early when this process decides or runs the call they wait on."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Event]] = defaultdict(set)

    def observer(self) -> Observer:
        """The gateway agent's observer: a decision or an execution wakes the run's waits."""

        def on_decision(event: DecisionTaken) -> None:
            self.wake(event.run_id)

        def on_executed(event: ToolExecuted) -> None:
            self.wake(event.run_id)

        return Observer(on_decision=on_decision, on_tool_executed=on_executed)

    def wake(self, run_id: str) -> None:
        for event in self._waiting.get(run_id, ()):
            event.set()

    async def wait(self, run_id: str, seconds: float) -> None:
        """Return after ``seconds``, or sooner when ``run_id`` is woken."""
        event = asyncio.Event()
        self._waiting[run_id].add(event)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), max(seconds, 0.0))
        finally:
            waiting = self._waiting.get(run_id)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self._waiting[run_id]
