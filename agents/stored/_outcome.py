"""What executing (or declining) one tool call produced."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agents._messages import Message
from agents._results import PendingToolCall
from agents.decisions import EXPIRED_REASON

DECLINED_MESSAGE = "The user declined this tool call. It was NOT executed."
EXPIRED_MESSAGE = (
    "Nobody decided this tool call before its approval expired, so it was NOT executed. "
    "Tell the user it expired (no one refused it); they may ask for it again."
)
INTERRUPTED_MESSAGE = (
    "This tool call was approved and started, but the process running it stopped before it "
    "finished. Its outcome is UNKNOWN: it may or may not have taken effect. Tell the user."
)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One call's outcome: terminal (``ok``, ``error``, ``denied``, ``interrupted``) or pending."""

    status: Literal["ok", "error", "denied", "interrupted", "suspended", "delegated"]
    result: Any = None
    """What the model sees, for terminal outcomes."""
    reason: str | None = None
    """The decline reason, for ``denied``."""
    suspend_payload: dict[str, Any] | None = None
    """For ``suspended``."""
    inner_run_id: str | None = None
    """For ``delegated``: the sub-agent's run that holds the pending calls."""
    inner_pending: list[PendingToolCall] = field(default_factory=list)

    @property
    def terminal(self) -> bool:
        return self.status in ("ok", "error", "denied", "interrupted")

    @classmethod
    def denied(cls, reason: str | None) -> Outcome:
        result: dict[str, Any] = {"status": "declined", "message": DECLINED_MESSAGE}
        if reason:
            result["reason"] = reason
        return cls(status="denied", result=result, reason=reason)

    @classmethod
    def expired(cls) -> Outcome:
        """The call waited past its ``expires_at``: it never ran, and the model is told it
        expired (``status: "expired"``), not that anyone declined it (SPEC 12 round 4)."""
        result = {"status": "expired", "message": EXPIRED_MESSAGE}
        return cls(status="denied", result=result, reason=EXPIRED_REASON)

    @classmethod
    def interrupted(cls) -> Outcome:
        return cls(
            status="interrupted", result={"status": "interrupted", "message": INTERRUPTED_MESSAGE}
        )

    @classmethod
    def error(cls, message: str) -> Outcome:
        return cls(status="error", result={"error": message})

    def to_document(self) -> dict[str, Any]:
        """JSON form stored with the claim once the work finished."""
        return {"status": self.status, "result": self.result, "reason": self.reason}

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> Outcome:
        return cls(status=doc["status"], result=doc.get("result"), reason=doc.get("reason"))

    def tool_message(self, call_id: str, tool_name: str) -> Message:
        content = self.result if isinstance(self.result, str) else json.dumps(self.result)
        return Message(role="tool", content=content, tool_call_id=call_id, name=tool_name)
