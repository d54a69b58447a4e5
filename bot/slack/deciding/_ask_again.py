"""A thread reply under a tool's question that did not answer it: the question is asked again.

The runtime's auto-resume turns a reply into resume data when it fits the question's
``resume_schema``; when it does not (nothing extracted, or data the schema refuses) the reply is
a normal turn. The bot notes which questions waited before the reply; when none of them was
resumed by it, the newest is posted again in the thread, saying what is missing, with its
"Provide details" button.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from slack_sdk.models.blocks import Block, MarkdownTextObject, SectionBlock

import bot.slack._messages as msg
from agents import PendingToolCall, SuspendedRunsPage
from bot.slack._services import Services
from bot.slack.blocks._blocks import as_dicts, question_blocks, question_fallback
from bot.slack.blocks._mrkdwn import escape_truncated
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.delivery._render import SlackThread

_FIELDS = 10
_OLDEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, kw_only=True)
class Question:
    """A call waiting for data, as it waited before a reply."""

    run_id: str
    call: PendingToolCall


def waiting_questions(waiting: SuspendedRunsPage) -> list[Question]:
    """The calls of the listed runs waiting for data with a ``resume_schema``, newest first."""
    found = [
        Question(run_id=run.run_id, call=call)
        for run in waiting.runs
        for call in run.tool_calls
        if not call.requires_approval and call.resume_schema is not None
    ]
    return sorted(found, key=lambda q: q.call.suspended_at or _OLDEST, reverse=True)


async def ask_again_if_unanswered(
    services: Services, thread: SlackThread, before: list[Question], *, answered_run: str
) -> bool:
    """Post the newest question of ``before`` again when the reply resumed none of them.

    ``answered_run``: the run the reply went on with. A reply that resumed a question goes on
    with that question's run (auto-resume decides it); any other reply starts a new run. So
    nothing needs reading again to tell.
    """
    if not before or any(q.run_id == answered_run for q in before):
        return False  # no question waited, or the reply answered one of them
    newest = before[0]
    call = newest.call
    ref = ApprovalRef(
        run_id=newest.run_id, tool_call_id=call.tool_call_id, fingerprint=call.fingerprint
    )
    note = msg.ASK_AGAIN.format(
        tool=escape_truncated(call.tool_name, 80).replace("`", "'"),
        missing=missing_text(call.resume_schema or {}),
    )
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=note))]
    blocks += question_blocks(call.tool_name, call.suspend_payload, ref)
    await services.client.chat_postMessage(
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        text=question_fallback(call.tool_name, call.suspend_payload),
        blocks=as_dicts(blocks),
    )
    return True


def missing_text(schema: dict[str, Any]) -> str:
    """``it needs `priority` (Priority), `due```: the required fields of a resume schema."""
    required = [str(name) for name in schema.get("required") or []][:_FIELDS]
    if not required:
        return msg.ASK_AGAIN_UNREADABLE
    properties = schema.get("properties") or {}
    named = []
    for name in required:
        spec = properties.get(name) if isinstance(properties, dict) else None
        hint = spec.get("description") if isinstance(spec, dict) else None
        label = "`" + escape_truncated(name, 60).replace("`", "'") + "`"
        if isinstance(hint, str) and hint:
            label += f" ({escape_truncated(hint, 120)})"
        named.append(label)
    return msg.ASK_AGAIN_MISSING.format(fields=", ".join(named))
