"""The persisted state of a suspended run (the snapshot document) and its conversions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents._messages import Message
from agents._results import PendingToolCall
from agents.running._chunks import ToolCallApprovalChunk, ToolCallSuspendedChunk
from storage import EscalationRecord

SCHEMA_VERSION = 1


class DelegateRef(BaseModel):
    """Where a sub-agent's pending call lives: the sub-agent, its run and its handle."""

    agent_key: str
    run_id: str
    tool_call_id: str


class GrantBounds(BaseModel):
    """A stored call's grant bounds (``agents.decisions.GrantLimits``); None: no bound."""

    max_seconds: float | None = None
    max_uses: int | None = None


class PendingCallState(BaseModel):
    """One pending call as stored."""

    tool_call_id: str
    """The handle to decide with at this level."""
    call_id: str
    """The model's id of the call at this level (several handles can share it for sub-agents)."""
    local_tool: str
    """The tool the model called at this level (``agent-<key>`` for delegations)."""
    local_args: dict[str, Any]
    kind: Literal["approval", "suspension"]
    tool_name: str
    """The tool that will run (inner tool for delegations)."""
    args: dict[str, Any]
    fingerprint: str
    agent_path: list[str]
    suspend_payload: dict[str, Any] | None = None
    resume_schema: dict[str, Any] | None = None
    round: int = 0
    """Bumped each time the same call suspends again; part of the claim key."""
    suspended_at: datetime
    delegate: DelegateRef | None = None
    requested_by: str | None = None
    """Who asked for the run (stored with the call, in the same write as the snapshot)."""
    expires_at: datetime | None = None
    """When an approval stops being decidable; checked inside every decision."""
    approvals_required: int = 1
    """Distinct approvers needed (quorum); the N-th approval claims the call."""
    definition_digest: str | None = None
    """``Tool.definition_digest`` of the tool when the call was presented (None in snapshots
    written before digests were stored)."""
    edited_from: dict[str, Any] | None = None
    """The arguments shown before an edit made this call the new proposal (None: not edited)."""
    carried_approvals: list[str] = Field(default_factory=list)
    """Approvals written with the call itself, not in storage's approvals: the editor's, when
    an edit made this the new proposal (``agents.deciding._edits``)."""
    grants: GrantBounds | None = None
    """The standing grants approving this call may create (its rule's ``grants``, or its
    tool's ``grants=True``); None: none (also for quorum and confirm rules, edited proposals
    and sub-agents' calls)."""
    discounted: list[str] = Field(default_factory=list)
    """Approvers whose approval no longer counts: the policy in force refused them when a later
    approval re-checked every counted one (authority at decision time)."""

    @property
    def claim_key(self) -> str:
        return f"{self.tool_call_id}#{self.round}"

    def announcement(self, run_id: str) -> ToolCallApprovalChunk | ToolCallSuspendedChunk:
        """The chunk that tells the stream this call now waits (an approval's carries every
        field of the pending call, so a reader needs no listing to show it)."""
        call = self.public()
        if self.kind == "approval":
            return ToolCallApprovalChunk(
                run_id=run_id,
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                args=call.args,
                fingerprint=call.fingerprint,
                resume_schema=call.resume_schema,
                agent_path=call.agent_path,
                definition_digest=call.definition_digest,
                requested_by=call.requested_by,
                expires_at=call.expires_at,
                approvals_required=call.approvals_required,
                approved_by=call.approved_by,
                edited_from=call.edited_from,
                suspend_payload=call.suspend_payload,
                grantable=call.grantable,
                grant_max_seconds=call.grant_max_seconds,
                grant_max_uses=call.grant_max_uses,
                suspended_at=call.suspended_at,
                escalation_step=call.escalation_step,
                escalated_approvers=call.escalated_approvers,
            )
        return ToolCallSuspendedChunk(
            run_id=run_id,
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=call.args,
            suspend_payload=call.suspend_payload,
            resume_schema=call.resume_schema,
            agent_path=call.agent_path,
        )

    def counted(self, stored: list[str] | None = None) -> list[str]:
        """Who counts toward the quorum, in order: the approvals carried with the call, then
        ``stored`` (storage's approvals of its claim key), without the discounted ones."""
        carried = self.carried_approvals
        seen = [*carried, *(a for a in stored or () if a not in carried)]
        return [a for a in seen if a not in self.discounted]

    def public(
        self,
        approved_by: list[str] | None = None,
        escalations: Sequence[EscalationRecord] = (),
    ) -> PendingToolCall:
        """The call as the runtime hands it out (``approved_by``: storage's approvals of it;
        the carried ones are added and the discounted ones left out, ``counted``;
        ``escalations``: storage's escalation steps of its run, those of this round count)."""
        steps = sorted((e for e in escalations if e.key == self.claim_key), key=lambda e: e.step)
        added = [a for e in steps for a in e.approvers]
        return PendingToolCall(
            tool_call_id=self.tool_call_id,
            tool_name=self.tool_name,
            args=dict(self.args),
            requires_approval=self.kind == "approval",
            suspend_payload=self.suspend_payload,
            resume_schema=self.resume_schema,
            fingerprint=self.fingerprint,
            agent_path=list(self.agent_path),
            suspended_at=self.suspended_at,
            requested_by=self.requested_by,
            expires_at=self.expires_at,
            approvals_required=self.approvals_required,
            approved_by=self.counted(approved_by),
            definition_digest=self.definition_digest,
            edited_from=None if self.edited_from is None else dict(self.edited_from),
            escalation_step=steps[-1].step if steps else 0,
            escalated_approvers=list(dict.fromkeys(added)),
            grantable=self.grants is not None,
            grant_max_seconds=None if self.grants is None else self.grants.max_seconds,
            grant_max_uses=None if self.grants is None else self.grants.max_uses,
        )


class RunState(BaseModel):
    """Everything needed to continue a run in another process (compact on purpose)."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    agent_id: str
    thread_id: str | None = None
    resource_id: str | None = None
    messages: list[Message] = Field(default_factory=list)
    """Messages of this run only (earlier thread history is reloaded from memory)."""
    steps: int = 0
    max_steps: int = 8
    require_tool_approval: bool = False
    """The call option as a boolean (a predicate is stored as True: fail safe)."""
    auto_resume: bool = False
    request_context: dict[str, Any] = Field(default_factory=dict)
    agent_path: list[str] = Field(default_factory=list)
    pending: list[PendingCallState] = Field(default_factory=list)
    error: str | None = None
    """Why the run stopped, when it failed; ``Agent.retry_run`` goes on from here."""
    requested_by: str | None = None
    """Who asked for this run (copied onto each pending call)."""
    approval_ttl_seconds: float | None = None
    """How long an approval of this run stays decidable (None: no expiry)."""
    trace_context: dict[str, str] = Field(default_factory=dict)
    """The span of the stretch that suspended (W3C ``traceparent``), for the one resuming it."""

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_defaults=True)
