"""What a run reports: pending calls, ``RunResult``, pages of suspended runs, standing grants.

``PendingToolCall`` is THE model of a pending call: what storage keeps (``agents.stored``), what
``Agent.pending_call`` returns, what the ``tool-call-approval`` chunk carries, what the HTTP API
serves (camelCase on the wire: ``model_dump(by_alias=True)``) and what a card draws. Adding a
field means adding it there (and, when the snapshot does not keep it, to what
``agents.stored._state.PendingCallState.public`` derives): every reader gets it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

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


_MODEL = ConfigDict(
    frozen=True, alias_generator=to_camel, populate_by_name=True, use_attribute_docstrings=True
)


class _Model(BaseModel):
    """Frozen, camelCase on the wire, readable as ``obj.name`` and ``obj["name"]``."""

    model_config = _MODEL

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None


class Escalation(_Model):
    """One escalation step of a call's rule (SPEC 15): what happens when nobody has decided
    the call ``after_seconds`` after it was presented."""

    after_seconds: float
    """How long after the call was presented."""
    approvers: list[str] = Field(default_factory=list)
    """Users and user groups who may approve the call from then on."""
    notify: list[str] = Field(default_factory=list)
    """Users and user groups told in the call's thread."""


class Requirement(_Model):
    """What the gate decided a pending call needs, and why, when it was presented: stored with
    the call, so every surface shows and enforces the same answer (SPEC 3.3 "One gate")."""

    reasons: list[str] = Field(default_factory=list)
    """Why the call waits, in words, one line per rule that held it ("delete-record always
    needs approval"; "Destructive MCP tool (no readOnlyHint)")."""
    rule: str | None = None
    """The key of the host's rule it falls under (a policy file's rule, its number and a digest
    of what it says); None: no rule matched. A standing grant applies only under the same key."""
    rule_number: int | None = None
    """That rule's number in its file (1-based), for people."""
    rule_source: str | None = None
    """The file the rule is in (``countersign.toml``)."""
    rule_text: str | None = None
    """What the rule says in words: its description, else its tools and conditions."""
    approvers: list[str] = Field(default_factory=list)
    """Who may approve under the rule (users, user groups); empty: anyone."""
    allow_self_approval: bool = True
    """Whether the requester may approve their own call."""
    confirm: bool = False
    """Approve asks "are you sure?" first (the rule says so)."""
    destructive: bool = False
    """The tool's annotations do not rule out destruction (an MCP tool): Approve confirms too."""
    ttl_seconds: float | None = None
    """How long the call stays decidable from when it was presented (None: no expiry)."""
    max_ttl_seconds: float | None = None
    """How long it may be kept decidable in all by Extend (None: as long as ``ttl_seconds``)."""
    escalate: list[Escalation] = Field(default_factory=list)
    """The rule's escalation steps, in increasing ``after_seconds``."""
    free_args: list[str] = Field(default_factory=list)
    """Arguments a standing grant of this call may let vary by default (the rule's)."""


class PendingToolCall(_Model):
    """A call waiting for a person: approval before it runs, or data after ``suspend()``."""

    tool_call_id: str
    """The handle to decide with (the outermost call id for sub-agent calls)."""
    tool_name: str
    """The tool that will run (the inner tool for sub-agent calls)."""
    args: dict[str, Any]
    """The arguments it will run with."""
    requires_approval: bool
    """True: waits for approve/decline. False: waits for resume data."""
    suspend_payload: dict[str, Any] | None = None
    """What the tool suspended with (None for approvals)."""
    resume_schema: dict[str, Any] | None = None
    """JSON schema of the resume data, or None."""
    fingerprint: str
    """``agents.fingerprint(tool_name, args)``: pass it back to decide on exactly these args."""
    agent_path: list[str]
    """The chain of agent ids from the top to the agent owning the tool."""
    suspended_at: datetime | None = None
    """When the call started waiting (as this proposal)."""
    requested_by: str | None = None
    """Who asked for the run that made the call (``stream(requested_by=...)``)."""
    expires_at: datetime | None = None
    """When an approval stops being decidable (UTC); None: never."""
    approvals_required: int = 1
    """Distinct approvers needed before the call runs (quorum)."""
    approved_by: list[str] = Field(default_factory=list)
    """Who has approved so far and still counts (quorum calls)."""
    definition_digest: str | None = None
    """``Tool.definition_digest`` of the tool when the call was presented (None: a call
    stored before digests were, or whose tool the agent did not have)."""
    edited_from: dict[str, Any] | None = None
    """The arguments shown before an edit made this the new proposal (None: not edited)."""
    edited_by: str | None = None
    """Who made that edit (None: not edited, or edited before editors were recorded)."""
    grantable: bool = False
    """True when a standing grant may be created while approving it (section 15)."""
    escalation_step: int = 0
    """How many of its rule's escalation steps the call went through while it waited (0:
    none; section 15)."""
    escalated_approvers: list[str] = Field(default_factory=list)
    """Users and user groups the escalation steps added: they may approve this call too,
    besides the approvers of its rule (in the order the steps added them)."""
    grant_max_seconds: float | None = None
    """When grantable: the longest such a grant may last (None: no bound)."""
    grant_max_uses: int | None = None
    """When grantable: the most calls such a grant may approve (None: no bound)."""
    requirement: Requirement = Field(default_factory=Requirement)
    """What the gate decided the call needs and why (its rule, approvers, confirm, TTL,
    escalation steps, the reasons in words)."""


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
    version: int = field(default=0, compare=False)
    """The stored snapshot's version when it was read (``Agent.reschedule_run`` names it);
    storage's bookkeeping, left out of comparisons (as is ``due_at``)."""
    due_at: datetime | None = field(default=None, compare=False)
    """When something is next due for the run, as stored (``agents.next_due``; None: never)."""


@dataclass(frozen=True, kw_only=True)
class SuspendedRunsPage(_ItemAccess):
    """One page of ``list_suspended_runs``."""

    runs: list[SuspendedRun]
    total: int
