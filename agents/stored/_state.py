"""The persisted state of a suspended run (the snapshot document) and its conversions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from agents._messages import Message
from agents._results import PendingToolCall
from agents.stored._due import next_due
from storage import EscalationRecord, SnapshotRecord

SCHEMA_VERSION = 1


class DelegateRef(BaseModel):
    """Where a sub-agent's pending call lives: the sub-agent, its run and its handle."""

    agent_key: str
    run_id: str
    tool_call_id: str


_DERIVED = frozenset({"approved_by", "escalation_step", "escalated_approvers"})
"""Fields of the public call read from storage's other records (approvals, escalation steps),
never kept in the snapshot: ``PendingCallState.public`` fills them in."""


class PendingCallState(PendingToolCall):
    """One pending call as stored: the public call (``agents.PendingToolCall``, every field of
    it kept in the snapshot but the derived ones) and what only the runtime needs."""

    suspended_at: datetime
    """When the call started waiting (as this proposal)."""
    call_id: str
    """The model's id of the call at this level (several handles can share it for sub-agents)."""
    local_tool: str
    """The tool the model called at this level (``agent-<key>`` for delegations)."""
    local_args: dict[str, Any]
    round: int = 0
    """Bumped each time the same call is presented again; part of the claim key."""
    delegate: DelegateRef | None = None
    carried_approvals: list[str] = Field(default_factory=list)
    """Approvals written with the call itself, not in storage's approvals: the editor's, when
    an edit made this the new proposal (``agents.gate.gates._edits``)."""
    discounted: list[str] = Field(default_factory=list)
    """Approvers whose approval no longer counts: the policy in force refused them when a later
    approval re-checked every counted one (authority at decision time)."""

    @model_validator(mode="before")
    @classmethod
    def _written_before_one_model(cls, data: Any) -> Any:
        """The snapshot says ``kind`` and ``grants`` ({max_seconds, max_uses}) where the model
        says ``requires_approval`` and ``grantable`` / ``grant_max_*`` (``to_document``)."""
        if isinstance(data, dict) and "kind" in data:
            data = dict(data)
            data["requires_approval"] = data.pop("kind") == "approval"
            bounds = data.pop("grants", None)
            if isinstance(bounds, dict):
                data["grantable"] = True
                data["grant_max_seconds"] = bounds.get("max_seconds")
                data["grant_max_uses"] = bounds.get("max_uses")
        return data

    @property
    def kind(self) -> Literal["approval", "suspension"]:
        """What the call waits for."""
        return "approval" if self.requires_approval else "suspension"

    @property
    def claim_key(self) -> str:
        return f"{self.tool_call_id}#{self.round}"

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
        fields = {name: getattr(self, name) for name in _COPIED}
        return PendingToolCall.model_construct(
            **fields,
            args=dict(self.args),
            agent_path=list(self.agent_path),
            edited_from=None if self.edited_from is None else dict(self.edited_from),
            approved_by=self.counted(approved_by),
            escalation_step=steps[-1].step if steps else 0,
            escalated_approvers=list(dict.fromkeys(added)),
        )

    def to_document(self) -> dict[str, Any]:
        """The call as the snapshot keeps it: no derived field, nothing at its default, and
        ``kind`` / ``grants`` as every version wrote them (an instance not yet upgraded reads
        what an upgraded one wrote, and the reverse: ``_written_before_one_model``)."""
        document = self.model_dump(mode="json", exclude_defaults=True, exclude=_NOT_KEPT)
        document["kind"] = self.kind
        if self.grantable:
            document["grants"] = {
                key: value
                for key, value in (
                    ("max_seconds", self.grant_max_seconds),
                    ("max_uses", self.grant_max_uses),
                )
                if value is not None
            }
        return document


_NOT_KEPT = {*_DERIVED, "requires_approval", "grantable", "grant_max_seconds", "grant_max_uses"}
"""What the snapshot does not keep under the model's own names (``to_document``)."""

_COPIED = tuple(
    name
    for name in PendingToolCall.model_fields
    if name not in _DERIVED and name not in ("args", "agent_path", "edited_from")
)
"""The public fields ``public`` hands out as they are (the mutable ones are copied)."""


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
        document = self.model_dump(mode="json", exclude_defaults=True, exclude={"pending"})
        if self.pending:
            document["pending"] = [p.to_document() for p in self.pending]
        return document


def still_waiting(
    record: SnapshotRecord, state: RunState, *, since: datetime | None = None
) -> SnapshotRecord:
    """The snapshot after ``record`` holding ``state``, still waiting for a person: the next
    version, decidable, due when its calls next need the sweep (``since``: when it was
    presented again; else when ``record`` was)."""
    return SnapshotRecord(
        run_id=state.run_id,
        agent_id=state.agent_id,
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        suspended_at=since or record.suspended_at,
        version=record.version + 1,
        data=state.to_document(),
        decidable=True,
        due_at=next_due(state.pending),
    )
