"""The demo model's words after tool results: what each call did, in one line."""

from __future__ import annotations

import json
from typing import Any

import bot.demo._text as text

_Messages = list[Any]


def summarize(messages: _Messages) -> str:
    """One line per tool result at the end of ``messages`` (a sub-agent's answer as it is)."""
    results = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.append(message)
    names = _call_names(messages)
    lines = [
        describe(m.name or names.get(m.tool_call_id or "", "the tool"), m.content or "")
        for m in reversed(results)
    ]
    return "\n".join(lines)


def describe(tool: str, content: str) -> str:
    """What one tool result says, in words."""
    try:
        result: Any = json.loads(content)
    except ValueError:
        return content  # a sub-agent's answer, or plain text
    if result is None:
        return text.DONE.format(tool=tool)
    if not isinstance(result, dict):
        return _returned(tool, result)
    if result.get("status") == "declined":
        reason = result.get("reason")
        suffix = text.DECLINED_REASON.format(reason=reason) if reason else ""
        return text.DECLINED.format(tool=tool, reason=suffix)
    if result.get("status") == "expired":
        return text.EXPIRED.format(tool=tool)
    if result.get("status") == "interrupted":
        return text.INTERRUPTED.format(tool=tool)
    if "error" in result:
        return text.FAILED.format(error=result["error"])
    describer = _DESCRIBERS.get(tool)
    return describer(result) if describer else _returned(tool, result)


RESULT_MAX_CHARS = 600
"""The most of a tool's result the offline model repeats (a tool of your own: ``/call``)."""


def _returned(tool: str, result: Any) -> str:
    shown = json.dumps(result, ensure_ascii=False, default=str)
    if len(shown) > RESULT_MAX_CHARS:
        shown = shown[: RESULT_MAX_CHARS - 1] + "…"
    return text.RETURNED.format(tool=tool, result=shown)


def _listed(result: dict[str, Any]) -> str:
    records = result.get("records") or []
    if not records:
        return text.LISTED_NONE
    lines = "\n".join(f"• {r['id']}: {r['name']} ({r['kind']})" for r in records)
    return text.LISTED.format(
        first=records[0]["id"], last=records[-1]["id"], total=result.get("total"), lines=lines
    )


def _record(result: dict[str, Any]) -> str:
    record = result.get("record")
    if not result.get("found") or not isinstance(record, dict):
        return text.NO_RECORD.format(id=result.get("id"))
    return text.RECORD.format(**record)


def _deleted(result: dict[str, Any]) -> str:
    if not result.get("deleted"):
        return text.NOT_DELETED.format(id=result.get("id"))
    return text.DELETED.format(id=result.get("id"), name=result.get("name"))


def _refunded(result: dict[str, Any]) -> str:
    if not result.get("refunded"):
        return text.NOT_REFUNDED.format(order=result.get("order"), reason=result.get("reason"))
    return text.REFUNDED.format(
        amount=f"{float(result.get('amount') or 0):,.2f}",
        order=result.get("order"),
        refund=result.get("refund_id"),
    )


def _ticket(result: dict[str, Any]) -> str:
    return text.TICKET.format(
        ticket=result.get("ticket"), title=result.get("title"), priority=result.get("priority")
    )


_DESCRIBERS = {
    "list-records": _listed,
    "get-record": _record,
    "delete-record": _deleted,
    "refund": _refunded,
    "open-ticket": _ticket,
}


def _call_names(messages: _Messages) -> dict[str, str]:
    return {c.id: c.name for m in messages if m.role == "assistant" for c in m.tool_calls}
