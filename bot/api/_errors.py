"""Errors of the HTTP API, both ways: runtime error → status and JSON body, and back.

The runtime's errors (``agents.errors``) travel as ``{"code", "message", ...details}`` and the
client raises the same class again. Errors that only exist at the HTTP edge:

    BotError                     (bot._errors)
    └── ApiError                 any other non-2xx answer (.status, .code, .body)
        ├── ApiAuthError         401: missing or wrong API token
        ├── AgentNotFound        404: no agent with that id is served
        └── ApiRequestError      400: malformed JSON, wrong body shape, bad query parameters

Statuses: 400 bad input (and ``AgentConfigError``: a quorum approval naming no one); 401 auth;
403 a standing grant refused (``GrantNotAllowed``); the decision policy refuses the decider
(``NotAllowedToDecide``, with its ``rule``:
``self-approval``, ``not-approver``, ``needs-person``, ``other-person`` …); 404 unknown agent
or run (``SnapshotNotFound``);
409 the call is not in a state to take this decision (``ToolCallNotSuspended``,
``AlreadyDecided``, ``ApprovalExpired``, ``FingerprintMismatch``, ``DuplicateApproval``,
``ToolChanged``: the call was presented again with its new definition; ``CannotExtend``: its
rule allows no more time);
422 data that fails the tool's schema (``InvalidResumeData``, ``InvalidToolArgs``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic.alias_generators import to_camel, to_snake

from agents.errors import (
    POLICY_RULE,
    AgentConfigError,
    AgentError,
    AlreadyDecided,
    AmbiguousToolCall,
    ApprovalExpired,
    DuplicateApproval,
    FingerprintMismatch,
    InvalidResumeData,
    InvalidToolArgs,
    NotAllowedToDecide,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from bot._errors import BotError, answer_of

AGENT_NOT_FOUND = "AGENT_NOT_FOUND"
INVALID_REQUEST = "INVALID_REQUEST"
MALFORMED_JSON = "MALFORMED_JSON"
UNAUTHORIZED = "UNAUTHORIZED"
NOT_FOUND = "NOT_FOUND"
METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
INTERNAL_ERROR = "INTERNAL_ERROR"
GRANT_NOT_FOUND = "GRANT_NOT_FOUND"
"""404: no standing grant has that id."""
PENDING_CALL_NOT_FOUND = "PENDING_CALL_NOT_FOUND"
"""404: no such call is pending (decided, or never was)."""
PERSON_TOKEN_REQUIRED = "PERSON_TOKEN_REQUIRED"
"""403: only a person's token may ask the gate (``POST /api/gate``)."""


class ApiError(BotError):
    """The API answered with an error the runtime has no class for."""

    def __init__(self, status: int, code: str, message: str, body: dict[str, Any]) -> None:
        self.status = status
        """The HTTP status."""
        self.code = code
        """The stable error code from the body."""
        self.body = body
        """The whole JSON body."""
        super().__init__(f"{message} (HTTP {status}, {code})")


class ApiAuthError(ApiError):
    """401: the API token is missing or wrong. Pass the server's ``API_TOKEN``."""


class AgentNotFound(ApiError):
    """404: the server serves no agent with this id."""


class ApiRequestError(ApiError):
    """400: the request was malformed (see ``.body["errors"]``); a bug in the caller."""


# -- server side ---------------------------------------------------------------------------
def status_of(error: AgentError) -> int:
    """The HTTP status of a runtime error (``bot.policy.answer_of``: one mapping for the API
    and Slack)."""
    return answer_of(error).status


def body_of(error: AgentError) -> dict[str, Any]:
    """The JSON body of a runtime error: ``code``, ``message`` and its ids in camelCase."""
    body: dict[str, Any] = {"code": error.code, "message": str(error)}
    for attr, key in (
        ("run_id", "runId"),
        ("tool_call_id", "toolCallId"),
        ("decision", "decision"),
        ("decided_by", "decidedBy"),
        ("expected", "expected"),
        ("given", "given"),
        ("candidates", "candidates"),
        ("errors", "errors"),
        ("rule", "rule"),
        ("reason", "reason"),
        ("approver", "approver"),
        ("approved_by", "approvedBy"),
        ("needed", "needed"),
    ):
        value = getattr(error, attr, None)
        if value is not None and value != "":
            body[key] = value
    for attr, value in vars(error).items():  # what an error class added later carries
        key = to_camel(attr)
        if key not in body and not attr.startswith("_") and _plain(value):
            body[key] = value
    if isinstance(error, AlreadyDecided):
        body["decidedBy"] = error.decided_by
    decided_at = getattr(error, "decided_at", None)
    if isinstance(decided_at, datetime):
        body["decidedAt"] = decided_at.isoformat()
    if "errors" in body:
        body["errors"] = [_issue(e) for e in body["errors"]]
    return body


def _plain(value: Any) -> bool:
    """A value the body can carry as it is (ids, counts, flags, lists of ids)."""
    if isinstance(value, str | int | float | bool):
        return True
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _issue(error: Any) -> dict[str, Any]:
    if not isinstance(error, dict):
        return {"loc": [], "msg": str(error), "type": "value_error"}
    loc = [p if isinstance(p, int | str) else str(p) for p in error.get("loc", ()) or ()]
    return {"loc": loc, "msg": str(error.get("msg", "")), "type": str(error.get("type", ""))}


# -- client side ---------------------------------------------------------------------------
def error_from(status: int, body: Any) -> Exception:
    """Rebuild the error an API answer describes (the same ``agents.errors`` class)."""
    if not isinstance(body, dict):
        body = {}
    code = str(body.get("code") or f"HTTP_{status}")
    message = str(body.get("message") or f"HTTP {status}")
    rebuilt = _runtime_error(code, message, body)
    if rebuilt is not None:
        return rebuilt
    if status == 401:
        return ApiAuthError(status, code, message, body)
    if code == AGENT_NOT_FOUND:
        return AgentNotFound(status, code, message, body)
    if status == 400:
        return ApiRequestError(status, code, message, body)
    return ApiError(status, code, message, body)


def _runtime_error(code: str, message: str, body: dict[str, Any]) -> AgentError | None:
    run_id = str(body.get("runId") or "")
    call_id = body.get("toolCallId")
    tool_call_id = str(call_id) if call_id is not None else None
    errors = [e for e in body.get("errors") or [] if isinstance(e, dict)]
    if code == SnapshotNotFound.code:
        return SnapshotNotFound(run_id)
    if code == AmbiguousToolCall.code:
        return AmbiguousToolCall(run_id, [str(c) for c in body.get("candidates") or []])
    if code == ToolCallNotSuspended.code:
        return ToolCallNotSuspended(run_id, tool_call_id, message)
    if code == ApprovalExpired.code:
        return ApprovalExpired(run_id, tool_call_id, decided_at=_when(body))
    if code == AlreadyDecided.code:
        by = body.get("decidedBy")
        return AlreadyDecided(
            run_id,
            tool_call_id,
            decision=str(body.get("decision") or "decided"),
            decided_by=None if by is None else str(by),
            decided_at=_when(body),
        )
    if code == FingerprintMismatch.code:
        return FingerprintMismatch(
            run_id,
            tool_call_id or "",
            str(body.get("expected") or ""),
            str(body.get("given") or ""),
        )
    if code == NotAllowedToDecide.code:
        by = body.get("decidedBy")
        return NotAllowedToDecide(
            run_id,
            tool_call_id or "",
            decided_by=None if by is None else str(by),
            reason=str(body.get("reason") or message),
            rule=str(body.get("rule") or POLICY_RULE),
        )
    if code == DuplicateApproval.code:
        return DuplicateApproval(
            run_id,
            tool_call_id or "",
            approver=str(body.get("approver") or ""),
            approved_by=[str(a) for a in body.get("approvedBy") or []],
            needed=int(body.get("needed") or 0),
        )
    if code == AgentConfigError.code:
        return AgentConfigError(message)
    if code == InvalidResumeData.code:
        return InvalidResumeData(tool_call_id or "", errors)
    if code == InvalidToolArgs.code:
        return InvalidToolArgs(tool_call_id or "", errors)
    return _any_runtime_error(code, message, body)


def _any_runtime_error(code: str, message: str, body: dict[str, Any]) -> AgentError | None:
    """Any other ``agents.errors`` class with this code, with the body's details as its
    attributes (snake_case): errors the runtime gains come back as themselves."""
    todo: list[type[AgentError]] = [AgentError]
    while todo:
        cls = todo.pop()
        if cls.code == code and cls.__module__ == AgentError.__module__:
            error = cls.__new__(cls)
            AgentError.__init__(error, message)
            for key, value in body.items():
                if key not in ("code", "message"):
                    setattr(error, to_snake(key), value)
            return error
        todo.extend(cls.__subclasses__())
    return None


def _when(body: dict[str, Any]) -> datetime:
    raw = body.get("decidedAt")
    try:
        return datetime.fromisoformat(str(raw))
    except ValueError:
        return datetime.min
