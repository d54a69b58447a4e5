"""The wire format of ``/api``: pydantic models, camelCase on the wire, snake_case in Python.

Request models forbid unknown fields (a typo such as ``toolcallId`` is a 400, not a silent
no-op) and are validated by alias only, so the OpenAPI description generated from them is
exactly what the server accepts. Response models are built from the runtime's dataclasses.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agents import PendingToolCall, RunResult, SuspendedRun, SuspendedRunsPage
from bot.api._grant_schemas import GrantRequestIn

MAX_ID_LENGTH = 255
"""Longest run, tool call, thread, resource id or ``decidedBy`` (the SQL id column width)."""
MAX_REASON_LENGTH = 4000
"""Longest decline reason the API accepts."""
MAX_PER_PAGE = 500
"""Largest ``perPage``."""
MAX_PAGE = 1_000_000
"""Largest ``page`` (keeps offsets far from integer overflow in SQL backends)."""
DEFAULT_PER_PAGE = 50
"""``perPage`` when only ``page`` is given."""
MAX_BATCH = 100
"""Most calls one ``decide-many`` request decides."""


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


Id = Annotated[
    str,
    Field(min_length=1, max_length=MAX_ID_LENGTH, pattern=r"^[^\u0000]*$"),
    AfterValidator(_no_nul),
]
"""A non-empty identifier without NUL characters."""


class _Wire(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        use_attribute_docstrings=True,
    )


class _Request(_Wire):
    model_config = ConfigDict(
        alias_generator=to_camel,
        frozen=True,
        extra="forbid",
        validate_by_name=False,
        use_attribute_docstrings=True,
    )


# -- requests ------------------------------------------------------------------------------
class SuspendedRunsQuery(_Request):
    """Query string of ``GET /api/agents/{agent_id}/suspended-runs``."""

    thread_id: Id | None = None
    """Only runs of this memory thread."""
    resource_id: Id | None = None
    """Only runs of this resource (user, channel…)."""
    page: int | None = Field(default=None, ge=0, le=MAX_PAGE)
    """Page number, from 0 (with ``perPage``; alone it uses ``perPage=50``)."""
    per_page: int | None = Field(default=None, ge=1, le=MAX_PER_PAGE)
    """Runs per page (alone it means page 0). Neither given: every run, unpaginated."""


class DecisionQuery(_Request):
    """Query string of the decision endpoints."""

    wait: bool = False
    """``true``: answer when the run has finished or suspended again, with its result."""


class ApproveRequest(_Request):
    """Body of ``POST /api/agents/{agent_id}/approve-tool-call``."""

    run_id: Id
    """The run holding the pending call."""
    tool_call_id: Id
    """The pending call to approve."""
    fingerprint: Id | None = None
    """The fingerprint shown to the approver; must match the pending call (else 409)."""
    args: dict[str, Any] | None = None
    """Approve with these edited arguments (validated against the tool's input schema)."""
    grant: GrantRequestIn | None = None
    """Also store a standing grant for later calls like this one (SPEC 15); 403
    ``GRANT_NOT_ALLOWED`` where the call's rule allows none or beyond its bounds."""
    decided_by: Id | None = None
    """The Slack user id of the person deciding. With a per-person token: that token's user
    (may be left out; any other value is 403). With the service token: taken as the decider
    only when the server sets ``API_TOKEN_ACTS_FOR_USERS=true``; otherwise the decision is no
    person's, which is 403 (rule ``needs-person``) for a quorum's approval or a call only named
    approvers decide."""


class ExtendRequest(_Request):
    """Body of ``POST /api/agents/{agent_id}/extend-tool-call`` (SPEC 12 "Extend")."""

    run_id: Id
    """The run holding the pending call."""
    tool_call_id: Id
    """The pending call to keep decidable for longer."""
    extended_by: Id | None = None
    """The Slack user id of the person extending, authenticated as ``decidedBy`` is: who may
    approve the call may extend it (else 403 ``APPROVAL_NOT_ALLOWED``)."""


class DeclineRequest(_Request):
    """Body of ``POST /api/agents/{agent_id}/decline-tool-call``."""

    run_id: Id
    """The run holding the pending call."""
    tool_call_id: Id
    """The pending call to decline."""
    reason: Annotated[str, Field(max_length=MAX_REASON_LENGTH)] | None = None
    """Why; the model is told (with this reason) that the call was not executed."""
    withdrawn: bool = False
    """True: the requester withdraws their own call (the decider must be the call's
    ``requestedBy``, else 403 with rule ``not-requester``); the model is told they withdrew it."""
    fingerprint: Id | None = None
    """The fingerprint shown to the approver; must match the pending call (else 409)."""
    decided_by: Id | None = None
    """The Slack user id of the person deciding. With a per-person token: that token's user
    (may be left out; any other value is 403). With the service token: taken as the decider
    only when the server sets ``API_TOKEN_ACTS_FOR_USERS=true``; otherwise the decision is no
    person's, which is 403 (rule ``needs-person``) for a quorum's approval or a call only named
    approvers decide."""


class ResumeRequest(_Request):
    """Body of ``POST /api/agents/{agent_id}/resume``."""

    run_id: Id
    """The run holding the suspended call."""
    tool_call_id: Id
    """The call that suspended itself."""
    resume_data: Any = Field(json_schema_extra={"description": "Data for the tool's resumeSchema"})
    """The data the tool asked for; validated against its ``resumeSchema`` (else 422)."""
    decided_by: Id | None = None
    """Who answered, as for approve: a per-person token's user, or the service token's
    ``decidedBy`` with ``API_TOKEN_ACTS_FOR_USERS=true`` (recorded in the audit log)."""


class BatchDecisionIn(_Request):
    """One call of a ``decide-many`` body."""

    tool_call_id: Id
    """The pending call."""
    decision: Literal["approve", "decline"]
    """What to do with it."""
    reason: Annotated[str, Field(max_length=MAX_REASON_LENGTH)] | None = None
    """For ``decline``: why; the model is told."""
    fingerprint: Id | None = None
    """The fingerprint shown for this call; must match the pending call (else 409)."""


class DecideManyRequest(_Request):
    """Body of ``POST /api/agents/{agent_id}/decide-many``: several calls of one run, decided
    in one transaction, all or nothing."""

    run_id: Id
    """The run holding the pending calls."""
    decisions: Annotated[list[BatchDecisionIn], Field(min_length=1, max_length=MAX_BATCH)]
    """One entry per call (each ``toolCallId`` once)."""
    decided_by: Id | None = None
    """Who decides, as for approve: a per-person token's user (may be left out), or the
    service token's ``decidedBy`` with ``API_TOKEN_ACTS_FOR_USERS=true``."""


# -- responses -----------------------------------------------------------------------------
PendingToolCallOut = PendingToolCall
"""A call waiting for a person on the wire: the runtime's one model of a pending call
(``agents.PendingToolCall``), camelCase (``model_dump(by_alias=True)``); the client reads it
back with ``PendingToolCall.model_validate``. No second shape to keep in step."""


class SuspendedRunOut(_Wire):
    """A run waiting for decisions."""

    run_id: str
    agent_id: str
    thread_id: str | None
    resource_id: str | None
    suspended_at: datetime
    tool_calls: list[PendingToolCall]

    @classmethod
    def of(cls, run: SuspendedRun) -> SuspendedRunOut:
        return cls(
            run_id=run.run_id,
            agent_id=run.agent_id,
            thread_id=run.thread_id,
            resource_id=run.resource_id,
            suspended_at=run.suspended_at,
            tool_calls=list(run.tool_calls),
        )

    def to_runtime(self) -> SuspendedRun:
        return SuspendedRun(
            run_id=self.run_id,
            agent_id=self.agent_id,
            thread_id=self.thread_id,
            resource_id=self.resource_id,
            suspended_at=self.suspended_at,
            tool_calls=list(self.tool_calls),
        )


class SuspendedRunsPageOut(_Wire):
    """One page of suspended runs, newest first, and how many there are in all."""

    runs: list[SuspendedRunOut]
    total: int

    @classmethod
    def of(cls, page: SuspendedRunsPage) -> SuspendedRunsPageOut:
        return cls(runs=[SuspendedRunOut.of(r) for r in page.runs], total=page.total)

    def to_runtime(self) -> SuspendedRunsPage:
        return SuspendedRunsPage(runs=[r.to_runtime() for r in self.runs], total=self.total)


class DecisionOut(_Wire):
    """The decision was claimed; the run continues in the background.

    With ``?wait=true`` the answer also carries the run's result (``text``, ``finishReason``,
    ``pending``, and ``error`` when the run failed).
    """

    run_id: str
    tool_call_id: str
    status: Literal["accepted"] = "accepted"
    text: str | None = None
    finish_reason: Literal["stop", "suspended", "length", "error", "abandoned"] | None = None
    pending: list[PendingToolCall] | None = None
    error: str | None = None

    @classmethod
    def of(cls, run_id: str, tool_call_id: str, result: RunResult | None) -> DecisionOut:
        if result is None:
            return cls(run_id=run_id, tool_call_id=tool_call_id)
        return cls(
            run_id=run_id,
            tool_call_id=tool_call_id,
            text=result.text,
            finish_reason=result.finish_reason,
            pending=list(result.pending),
            error=None if result.error is None else str(result.error),
        )


class DecideManyOut(_Wire):
    """Every decision of the batch was claimed; the run continues in the background (with
    ``?wait=true`` the answer carries the run's result, as for one decision)."""

    run_id: str
    tool_call_ids: list[str]
    status: Literal["accepted"] = "accepted"
    text: str | None = None
    finish_reason: Literal["stop", "suspended", "length", "error", "abandoned"] | None = None
    pending: list[PendingToolCall] | None = None
    error: str | None = None

    @classmethod
    def of(cls, run_id: str, tool_call_ids: list[str], result: RunResult | None) -> DecideManyOut:
        one = DecisionOut.of(run_id, tool_call_ids[0], result)
        return cls(
            run_id=run_id,
            tool_call_ids=tool_call_ids,
            text=one.text,
            finish_reason=one.finish_reason,
            pending=one.pending,
            error=one.error,
        )


class ValidationIssue(_Wire):
    """One validation problem: where (``loc``), what (``msg``), and its kind (``type``)."""

    loc: list[str | int]
    msg: str
    type: str


class ErrorOut(BaseModel):
    """Every error: a stable ``code``, a ``message`` saying what to do, and details."""

    model_config = ConfigDict(
        frozen=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        use_attribute_docstrings=True,
    )

    code: str
    """Stable machine-readable code (``APPROVAL_ALREADY_DECIDED``, ``AGENT_NOT_FOUND`` …)."""
    message: str
    """What happened and what to do."""
    run_id: str | None = Field(default=None, alias="runId")
    tool_call_id: str | None = Field(default=None, alias="toolCallId")
    agent_id: str | None = Field(default=None, alias="agentId")
    decision: str | None = None
    """``AlreadyDecided``: ``approved``, ``declined``, ``resumed`` or ``expired``."""
    decided_by: str | None = Field(default=None, alias="decidedBy")
    decided_at: datetime | None = Field(default=None, alias="decidedAt")
    expected: str | None = None
    """``FingerprintMismatch``: the pending call's fingerprint."""
    given: str | None = None
    """``FingerprintMismatch``: the fingerprint sent."""
    candidates: list[str] | None = None
    """``AmbiguousToolCall``: the pending tool call ids."""
    errors: list[ValidationIssue] | None = None
    """400 and 422: the validation errors."""
    rule: str | None = None
    """``NotAllowedToDecide``: the rule that refused (``self-approval``, ``not-approver``,
    ``needs-person``, ``other-person``, ``policy`` …)."""
    reason: str | None = None
    """``NotAllowedToDecide``: why, in words."""
    approver: str | None = None
    """``DuplicateApproval``: who approved twice."""
    approved_by: list[str] | None = Field(default=None, alias="approvedBy")
    """``DuplicateApproval``: who has approved so far."""
    needed: int | None = None
    """``DuplicateApproval``: how many different people must approve."""
