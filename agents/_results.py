"""What a run reports: pending calls, ``RunResult``, pages of suspended runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from agents.models._base import Usage

FinishReason = Literal["stop", "suspended", "length", "error", "abandoned"]
"""How a stretch of a run ended; ``abandoned``: another instance took over the call this
process ran (``LeaseLost``), so this process stopped without a further chunk (not even
``finish``) and without telling anyone: the call's one outcome is the new owner's."""


class _ItemAccess:
    """Lets result objects be read as ``obj.name`` and ``obj["name"]``."""

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None


@dataclass(frozen=True, kw_only=True)
class PendingToolCall(_ItemAccess):
    """A call waiting for a person: approval before it runs, or data after ``suspend()``."""

    tool_call_id: str
    """The handle to decide with (the outermost call id for sub-agent calls)."""
    tool_name: str
    """The tool that will run (the inner tool for sub-agent calls)."""
    args: dict[str, Any]
    """The arguments it will run with."""
    requires_approval: bool
    """True: waits for approve/decline. False: waits for resume data."""
    suspend_payload: dict[str, Any] | None
    """What the tool suspended with (None for approvals)."""
    resume_schema: dict[str, Any] | None
    """JSON schema of the resume data, or None."""
    fingerprint: str
    """``agents.fingerprint(tool_name, args)``."""
    agent_path: list[str]
    """The chain of agent ids from the top to the agent owning the tool."""
    suspended_at: datetime | None = None
    """When the call started waiting."""
    requested_by: str | None = None
    """Who asked for the run that made the call (``stream(requested_by=...)``)."""
    expires_at: datetime | None = None
    """When an approval stops being decidable (UTC); None: never."""
    approvals_required: int = 1
    """Distinct approvers needed before the call runs (quorum)."""
    approved_by: list[str] = field(default_factory=list)
    """Who has approved so far (for quorum calls)."""
    definition_digest: str | None = None
    """``Tool.definition_digest`` of the tool when the call was presented (None: a call
    stored before digests were, or whose tool the agent did not have)."""
    edited_from: dict[str, Any] | None = None
    """The arguments shown before an edit made this the new proposal (None: not edited)."""
    grantable: bool = False
    """True when a standing grant may be created while approving it (section 15)."""
    escalation_step: int = 0
    """How many of its rule's escalation steps the call went through while it waited (0:
    none; section 15)."""
    escalated_approvers: list[str] = field(default_factory=list)
    """Users and user groups the escalation steps added: they may approve this call too,
    besides the approvers of its rule (in the order the steps added them)."""
    grant_max_seconds: float | None = None
    """When grantable: the longest such a grant may last (None: no bound)."""
    grant_max_uses: int | None = None
    """When grantable: the most calls such a grant may approve (None: no bound)."""


@dataclass(frozen=True, kw_only=True)
class Grant(_ItemAccess):
    """A standing grant (SPEC 15): later calls of ``tool_name`` at ``agent_path`` in its scope
    whose pinned arguments equal ``pins`` are approved by it, as decisions of ``granted_by``."""

    grant_id: str
    """Its id (revoke it with ``Agent.revoke_grant(grant_id, revoked_by=...)``)."""
    tool_name: str
    """The tool whose calls it approves."""
    agent_path: list[str]
    """The chain of agent ids from the top to the agent owning the tool."""
    thread_id: str | None
    """Scope ``thread``: the memory thread it applies in (else None)."""
    resource_id: str | None
    """Scope ``resource``: the resource (channel) it applies in (else None)."""
    pins: dict[str, Any]
    """Every argument of the approved call but the free ones: later calls must match them."""
    free_args: list[str]
    """The arguments that may differ."""
    granted_by: str
    """Who granted it."""
    created_at: datetime
    expires_at: datetime
    """It approves nothing at or after this moment."""
    max_uses: int
    """The most calls it approves."""
    uses: int
    """How many it approved so far."""
    revoked_at: datetime | None = None
    """When it was revoked (None: not revoked)."""
    revoked_by: str | None = None
    """Who revoked it."""
    agent_id: str = ""
    """The agent whose runs it applies to."""


@dataclass(frozen=True, kw_only=True)
class ToolCallRecord(_ItemAccess):
    """A tool call the model made."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolResultRecord(_ItemAccess):
    """The result a tool call produced (or its denial/error, as the model saw it)."""

    tool_call_id: str
    tool_name: str
    result: Any


@dataclass(frozen=True, kw_only=True)
class StepResult(_ItemAccess):
    """One model turn and the tool calls it made."""

    text: str
    tool_calls: list[ToolCallRecord]
    tool_results: list[ToolResultRecord]
    usage: Usage


@dataclass(frozen=True, kw_only=True)
class RunResult(_ItemAccess):
    """The outcome of ``generate()`` or ``await stream.result()``."""

    text: str
    """The answer's text (of this stretch of the run)."""
    finish_reason: FinishReason
    """``stop``, ``suspended`` (calls are pending), ``length`` (max_steps), ``error``, or
    ``abandoned`` (a takeover fenced this process out: ``error`` is the ``LeaseLost``, and the
    stream ended with no further chunk; an edge shows nothing for it)."""
    run_id: str
    """Decide or resume pending calls with this id."""
    pending: list[PendingToolCall] = field(default_factory=list)
    """Every call waiting for a person."""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    tool_results: list[ToolResultRecord] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: BaseException | None = None
    """The error that ended the run when ``finish_reason == "error"``."""

    @property
    def suspend_payload(self) -> PendingToolCall | None:
        """The most recently suspended pending call, or None."""
        return self.pending[-1] if self.pending else None


@dataclass(frozen=True, kw_only=True)
class SuspendedRun(_ItemAccess):
    """A run waiting for decisions, as listed by ``list_suspended_runs``."""

    run_id: str
    agent_id: str
    thread_id: str | None
    resource_id: str | None
    suspended_at: datetime
    tool_calls: list[PendingToolCall]
    error: str | None = None
    """Set when the run stopped on an error (e.g. the model failed): ``retry_run`` continues it."""


@dataclass(frozen=True, kw_only=True)
class SuspendedRunsPage(_ItemAccess):
    """One page of ``list_suspended_runs``."""

    runs: list[SuspendedRun]
    total: int
