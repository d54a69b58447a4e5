"""Errors raised by the agent runtime. Each has a stable ``.code``.

AgentError
├── SnapshotNotFound       AGENT_RESUME_NO_SNAPSHOT_FOUND
├── ToolCallNotSuspended   AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED
│   └── AmbiguousToolCall  AGENT_RESUME_AMBIGUOUS_TOOL_CALL
├── AlreadyDecided         APPROVAL_ALREADY_DECIDED
│   └── ApprovalExpired    APPROVAL_EXPIRED
├── DuplicateApproval      APPROVAL_DUPLICATE_APPROVER
├── NotAllowedToDecide     APPROVAL_NOT_ALLOWED
├── CannotExtend           APPROVAL_CANNOT_EXTEND (its rule allows no more time)
├── FingerprintMismatch    APPROVAL_FINGERPRINT_MISMATCH
├── ToolChanged            APPROVAL_TOOL_CHANGED
├── InvalidResumeData      AGENT_RESUME_INVALID_DATA
├── InvalidToolArgs        APPROVAL_INVALID_ARGS
├── GrantNotAllowed        GRANT_NOT_ALLOWED (a standing grant refused; nothing recorded)
├── AgentConfigError       AGENT_CONFIG_INVALID
├── LeaseLost              CLAIM_LEASE_LOST (a takeover fenced this owner out)
├── ModelError             MODEL_ERROR
├── RunnerClosed           AGENT_RUNNER_CLOSED
└── ScriptExhausted        MODEL_SCRIPT_EXHAUSTED (agents.models.ScriptedModel)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

POLICY_RULE = "policy"
"""``NotAllowedToDecide.rule`` when the policy answered with a plain sentence (or failed)."""

NOT_REQUESTER_RULE = "not-requester"
"""``NotAllowedToDecide.rule`` when someone other than the requester tries to withdraw a call."""


class AgentError(Exception):
    """Root of every error raised by the ``agents`` package."""

    code: ClassVar[str] = "AGENT_ERROR"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description (``code`` and ``message``) for APIs and logs."""
        return {"code": self.code, "message": str(self)}


class SnapshotNotFound(AgentError):
    """Storage has never seen this run (or it was stored somewhere else)."""

    code = "AGENT_RESUME_NO_SNAPSHOT_FOUND"

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(
            f"no suspended run {run_id!r} in storage. If it was started by another process or "
            "before a restart, configure persistent storage shared by both (STORAGE_URL="
            "sqlite+aiosqlite:///./data/countersign.db or postgresql+asyncpg://…, or pass "
            "storage=create_storage(url) to the Agent); an in-memory store forgets runs on exit"
        )


class ToolCallNotSuspended(AgentError):
    """The run exists, but the given tool call is not waiting for this kind of decision."""

    code = "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"

    def __init__(self, run_id: str, tool_call_id: str | None, detail: str = "") -> None:
        self.run_id, self.tool_call_id = run_id, tool_call_id
        super().__init__(
            detail
            or f"tool call {tool_call_id!r} of run {run_id!r} is not suspended; list the "
            "pending calls with list_suspended_runs() and pass one of their tool_call_id"
        )


class AmbiguousToolCall(ToolCallNotSuspended):
    """Several calls are pending and none was named."""

    code = "AGENT_RESUME_AMBIGUOUS_TOOL_CALL"

    def __init__(self, run_id: str, candidates: list[str]) -> None:
        self.candidates = candidates
        super().__init__(
            run_id,
            None,
            f"{len(candidates)} tool calls are pending ({', '.join(candidates)}); "
            "pass tool_call_id to say which one you decide",
        )


class AlreadyDecided(AgentError):
    """Someone decided this call first; nothing was run a second time."""

    code = "APPROVAL_ALREADY_DECIDED"

    def __init__(
        self,
        run_id: str,
        tool_call_id: str | None,
        *,
        decision: str,
        decided_by: str | None,
        decided_at: datetime,
    ) -> None:
        self.run_id, self.tool_call_id, self.decision = run_id, tool_call_id, decision
        self.decided_by, self.decided_at = decided_by, decided_at
        who = decided_by or "someone"
        super().__init__(
            f"tool call {tool_call_id!r} of run {run_id!r} was already {decision} by {who} "
            f"at {decided_at.isoformat()}; a decision is single-use, nothing was run again"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "decision": self.decision,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at.isoformat(),
        }


class FingerprintMismatch(AgentError):
    """The decision was made on different arguments than the ones pending."""

    code = "APPROVAL_FINGERPRINT_MISMATCH"

    def __init__(self, run_id: str, tool_call_id: str, expected: str, given: str) -> None:
        self.run_id, self.tool_call_id = run_id, tool_call_id
        self.expected, self.given = expected, given
        super().__init__(
            f"the fingerprint given for tool call {tool_call_id!r} of run {run_id!r} does not "
            "match the pending call: it was shown with other arguments. Reload the pending "
            "call and decide again; nothing was run"
        )


class ToolChanged(AgentError):
    """The tool's definition changed since the call was shown (an MCP server redefined it):
    nothing ran, and the call was presented again with the new definition (approvals counting
    from zero). ``call`` is that new proposal; decide it instead."""

    code = "APPROVAL_TOOL_CHANGED"

    def __init__(
        self,
        run_id: str,
        tool_call_id: str,
        *,
        shown_digest: str | None,
        current_digest: str | None,
        call: Any = None,
        presented_again: bool = True,
        stream: Any = None,
    ) -> None:
        self.run_id = run_id
        self.tool_call_id = tool_call_id
        self.shown_digest = shown_digest
        """``definition_digest`` of the tool as the call was shown."""
        self.current_digest = current_digest
        """``definition_digest`` of the tool that would have run."""
        self.call = call
        """The call presented again (an ``agents.PendingToolCall``), or None."""
        self.presented_again = presented_again
        """True: this decision presented the call again (a new approval chunk / card is due);
        False: it had been presented again before, and the decision named the old digest."""
        self.stream = stream
        """When ``presented_again``: the (finished) ``AgentStream`` announcing the call again,
        a new ``tool-call-approval`` chunk then ``finish_reason "suspended"``, for an edge to
        show as it shows any run (a new card)."""
        super().__init__(
            f"the tool of call {tool_call_id!r} of run {run_id!r} changed since it was shown "
            "(its definition is not the one approved); nothing was run. The call was presented "
            "again with the new definition: review it and decide again"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "shown_digest": self.shown_digest,
            "current_digest": self.current_digest,
        }


class InvalidResumeData(AgentError):
    """Resume data does not validate against the tool's ``resume_schema``."""

    code = "AGENT_RESUME_INVALID_DATA"

    def __init__(self, tool_call_id: str, errors: list[dict[str, Any]]) -> None:
        self.tool_call_id, self.errors = tool_call_id, errors
        super().__init__(
            f"resume data for tool call {tool_call_id!r} does not match its resume_schema: "
            f"{_summary(errors)}. The call is still suspended; send valid data"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "errors": self.errors}


class InvalidToolArgs(AgentError):
    """Tool arguments that cannot be used: edited arguments given on approve that fail the
    tool's input schema (nothing is claimed), or a model's arguments that are not strict JSON
    (NaN, Infinity, a lone surrogate: the run ends with this error and nothing is stored)."""

    code = "APPROVAL_INVALID_ARGS"

    def __init__(
        self, tool_call_id: str, errors: list[dict[str, Any]], *, from_model: bool = False
    ) -> None:
        self.tool_call_id, self.errors = tool_call_id, errors
        self.from_model = from_model
        """True when the model sent them (not a person editing a pending call)."""
        if from_model:
            message = (
                f"the model's arguments for tool call {tool_call_id!r} are not strict JSON "
                f"({_summary(errors)}); nothing was stored or run. Ask again, or check the "
                "model's output"
            )
        else:
            message = (
                f"edited arguments for tool call {tool_call_id!r} are invalid: "
                f"{_summary(errors)}. Nothing was claimed: the call is still pending"
            )
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "errors": self.errors}


class ApprovalExpired(AlreadyDecided):
    """The pending call expired before anyone decided it (it never ran; the model was told)."""

    code = "APPROVAL_EXPIRED"

    def __init__(self, run_id: str, tool_call_id: str | None, *, decided_at: datetime) -> None:
        AgentError.__init__(
            self,
            f"tool call {tool_call_id!r} of run {run_id!r} expired before it was decided; "
            "it did not run. Ask the agent again to get a new request",
        )
        self.run_id, self.tool_call_id, self.decision = run_id, tool_call_id, "expired"
        self.decided_by, self.decided_at = None, decided_at


class DuplicateApproval(AgentError):
    """The same person approved a call that needs several distinct approvers twice."""

    code = "APPROVAL_DUPLICATE_APPROVER"

    def __init__(
        self, run_id: str, tool_call_id: str, *, approver: str, approved_by: list[str], needed: int
    ) -> None:
        self.run_id, self.tool_call_id, self.approver = run_id, tool_call_id, approver
        self.approved_by = approved_by
        """Who has approved so far."""
        self.needed = needed
        """How many distinct approvers the call needs."""
        super().__init__(
            f"{approver} has already approved tool call {tool_call_id!r} of run {run_id!r}; it "
            f"needs {needed} different approvers ({len(approved_by)} so far): someone else must "
            "approve it"
        )


class NotAllowedToDecide(AgentError):
    """The decision policy refuses this person (or, with no ``decided_by``, no person) this
    decision, e.g. the requester approving their own call."""

    code = "APPROVAL_NOT_ALLOWED"

    def __init__(
        self,
        run_id: str,
        tool_call_id: str,
        *,
        decided_by: str | None,
        reason: str,
        rule: str = POLICY_RULE,
    ) -> None:
        self.run_id, self.tool_call_id, self.decided_by = run_id, tool_call_id, decided_by
        self.rule = rule
        """The name of the rule that refused (``self-approval``, ``not-approver`` …): what the
        policy's refusal named (see ``agents.decisions.PolicyRefusal``), or ``policy`` for a
        policy that answered with a sentence."""
        self.reason = reason
        """The policy's words saying why not."""
        super().__init__(
            f"{decided_by or 'a caller who is no person'} may not decide tool call "
            f"{tool_call_id!r} of run {run_id!r}: {reason}. Nothing was claimed: someone "
            "allowed must decide it"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "rule": self.rule, "reason": self.reason}


class CannotExtend(AgentError):
    """Extend refused by the call's rule: it allows no extension, or ``expires_at`` is at its
    maximum already (``presented + max_ttl_seconds``). Nothing was changed."""

    code = "APPROVAL_CANNOT_EXTEND"

    def __init__(self, run_id: str, tool_call_id: str, *, reason: str) -> None:
        self.run_id, self.tool_call_id, self.reason = run_id, tool_call_id, reason
        super().__init__(f"call {tool_call_id!r} of run {run_id!r} cannot be extended: {reason}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "reason": self.reason}


class GrantNotAllowed(AgentError):
    """A standing grant refused (SPEC 15: rule, bounds, quorum, confirm, edit, revoker)."""

    code = "GRANT_NOT_ALLOWED"

    def __init__(self, reason: str, *, tool_call_id: str | None = None) -> None:
        self.reason = reason
        self.tool_call_id = tool_call_id  # the call whose approval asked for it (or None)
        super().__init__(
            f"no standing grant here: {reason}. Nothing was recorded"
            + (f"; tool call {tool_call_id!r} is still pending" if tool_call_id else "")
        )


class AgentConfigError(AgentError):
    """An ``Agent`` was built or called with options it cannot use."""

    code = "AGENT_CONFIG_INVALID"


class ModelError(AgentError):
    """The model provider failed for good (after its own retries)."""

    code = "MODEL_ERROR"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        request_id: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.status = status
        self.request_id = request_id
        self.hint = hint
        """What to fix, in one sentence a person in the thread can act on (or pass on), e.g.
        "an admin should set OPENAI_API_KEY"; None when there is nothing they can do."""
        extra = [f"status {status}"] if status is not None else []
        extra += [f"request id {request_id}"] if request_id else []
        super().__init__("; ".join([message, *extra]))


class RunnerClosed(AgentError):
    """Work was handed to a ``Runner`` after ``close()``: the process is shutting down."""

    code = "AGENT_RUNNER_CLOSED"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"the runner is closed, so {name!r} was not started; the process is shutting down. "
            "Start work before Runner.close(), or give the agent a new Runner"
        )


class ScriptExhausted(AgentError):
    """A ``ScriptedModel`` was asked for more answers than its script holds."""

    code = "MODEL_SCRIPT_EXHAUSTED"


class LeaseLost(AgentError):
    """Another instance took over the claim this process held (its lease lapsed, e.g. while the
    process was paused): storage refused this owner's write, and the call's outcome is the new
    owner's. The old owner abandons the call and its run and tells nobody anything; a run
    abandoned so ends with ``finish_reason "abandoned"`` and no further chunk."""

    code = "CLAIM_LEASE_LOST"

    def __init__(self, run_id: str, key: str, *, owner: str | None, epoch: int) -> None:
        self.run_id = run_id
        self.key = key
        """The claim key (``<tool_call_id>#<round>``)."""
        self.owner = owner
        """The owner that lost the claim (this process)."""
        self.epoch = epoch
        """The lease epoch it held; the claim is at a later one now."""
        super().__init__(
            f"the claim {key!r} of run {run_id!r} was taken over by another instance after "
            f"its lease lapsed (this owner {owner!r} held epoch {epoch}): its outcome is the new "
            "owner's, and this process drops the run. If this process was only paused or cut off "
            "from storage, make CLAIM_LEASE_SECONDS longer than such pauses"
        )


def _summary(errors: list[dict[str, Any]]) -> str:
    said = [
        f"{'.'.join(map(str, e.get('loc', ()) or ())) or '(root)'}: {e.get('msg')}" for e in errors
    ]
    return "; ".join(said[:5]) or "invalid"
