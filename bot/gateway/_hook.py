"""``python -m bot hook claude-code``: Claude Code's ``PreToolUse`` hook, answered by the bot.

Claude Code runs the command before a tool (its settings:
``{"hooks": {"PreToolUse": [{"matcher": "Bash|Write|Edit|mcp__.*", "hooks": [{"type":
"command", "command": "python -m bot hook claude-code", "timeout": 600}]}]}}``) with the call as
JSON on stdin (``session_id``, ``tool_name``, ``tool_input``, ``tool_use_id``, ``cwd``,
``hook_event_name``). The hook asks the bot (``POST /api/gate`` at ``COUNTERSIGN_URL`` with
``COUNTERSIGN_TOKEN``), waiting up to ``--wait`` seconds for a decision (asking again every
``ASK_SECONDS``, each time waiting on the same pending call), and prints
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow" |
"deny", "permissionDecisionReason": "..."}}``. It always exits 0, and anything that goes
wrong (the bot down, a refused token, input it cannot read) is a ``deny`` saying why:
fail-closed, never a crash that Claude Code would read as "no opinion".

Example:
    >>> answer = await ask_hook(stdin_text, url="http://127.0.0.1:3000", token="...",
    ...                         wait_seconds=540)  # doctest: +SKIP
    >>> answer["hookSpecificOutput"]["permissionDecision"]
    'allow'
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Literal

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import bot.gateway._messages as msg

DEFAULT_WAIT_SECONDS = 540.0
"""``--wait``'s default: under the 600 s ``timeout`` the hook settings in docs/gateway.md give."""
ASK_SECONDS = 50.0
"""The longest one request waits at the bot (then it asks again, on the same call)."""
CLIENT = "claude-code"
"""The client's name on the card."""


class HookInput(BaseModel):
    """What Claude Code sends on stdin to a ``PreToolUse`` hook (fields it may add are kept
    out of the way)."""

    model_config = ConfigDict(extra="ignore")

    tool_name: str = Field(min_length=1)
    tool_input: dict[str, Any] = Field(default_factory=dict)
    session_id: str | None = None
    tool_use_id: str | None = None
    cwd: str | None = None
    hook_event_name: str = "PreToolUse"


Decision = Literal["allow", "deny"]


def hook_output(decision: Decision, reason: str) -> dict[str, Any]:
    """Claude Code's ``PreToolUse`` answer."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


async def ask_hook(
    stdin_text: str, *, url: str, token: str | None, wait_seconds: float, client: str = CLIENT
) -> dict[str, Any]:
    """Claude Code's answer for the call in ``stdin_text`` (never raises: see the module)."""
    try:
        call = HookInput.model_validate_json(stdin_text)
    except ValidationError as exc:
        return hook_output("deny", msg.HOOK_REFUSED.format(error=f"unreadable input: {exc}"))
    if token is None:
        return hook_output("deny", msg.HOOK_REFUSED.format(error="COUNTERSIGN_TOKEN is not set"))
    body: dict[str, Any] = {
        "tool": call.tool_name,
        "args": call.tool_input,
        "client": client,
        **{k: v for k, v in _ids(call).items() if v},
    }
    deadline = time.monotonic() + max(wait_seconds, 0.0)
    try:
        async with aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {token}"}, trust_env=False
        ) as http:
            while True:
                left = deadline - time.monotonic()
                body["waitSeconds"] = round(max(0.0, min(left, ASK_SECONDS)), 3)
                answer = await _ask(http, url, body)
                if isinstance(answer, str):
                    return hook_output("deny", msg.HOOK_REFUSED.format(error=answer))
                if answer.get("status") != "pending" or deadline - time.monotonic() <= 0:
                    return _decided(answer)
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
        return hook_output("deny", msg.HOOK_UNREACHABLE.format(error=_why(exc)))


async def _ask(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any] | str:
    """The bot's answer, or why it gave none (a refused token, a bad request)."""
    timeout = aiohttp.ClientTimeout(total=float(body["waitSeconds"]) + 30.0)
    async with http.post(f"{url}/api/gate", json=body, timeout=timeout) as response:
        text = await response.text()
        if response.status != 200:
            try:
                detail = json.loads(text).get("message") or text
            except ValueError:
                detail = text
            return f"HTTP {response.status}: {str(detail)[:300]}"
        answer: dict[str, Any] = json.loads(text)
        return answer


def _decided(answer: dict[str, Any]) -> dict[str, Any]:
    status = answer.get("status")
    who = answer.get("decidedBy") or msg.NOBODY
    if status == "allowed":
        return hook_output("allow", msg.HOOK_ALLOWED)
    if status == "approved":
        return hook_output("allow", msg.HOOK_APPROVED.format(who=who))
    if status == "declined":
        reason = answer.get("reason")
        why = msg.WHY.format(reason=reason) if reason else ""
        return hook_output("deny", "countersign: " + msg.DECLINED.format(who=who, why=why))
    if status == "expired":
        return hook_output("deny", msg.HOOK_EXPIRED)
    card = answer.get("card")
    where = msg.WHERE_CARD.format(card=card) if card else msg.WHERE_SLACK
    return hook_output("deny", msg.HOOK_WAITING.format(where=where))


def _ids(call: HookInput) -> dict[str, str | None]:
    return {"session": call.session_id, "callId": call.tool_use_id, "cwd": call.cwd}


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def run_hook(stdin_text: str, *, url: str, token: str | None, wait_seconds: float) -> str:
    """The hook's whole output line (``python -m bot hook claude-code``)."""
    answer = asyncio.run(ask_hook(stdin_text, url=url, token=token, wait_seconds=wait_seconds))
    return json.dumps(answer)
