"""A thread reply under a tool's question that did not answer it: the question is asked again.

The runtime's auto-resume turns a reply into resume data when it fits the question's
``resume_schema``; when it does not (nothing extracted, or data the schema refuses) the reply is
a normal turn. The bot notes which questions waited before the reply; when none of them was
resumed by it, the newest is asked again in the same bot message as the turn's answer (one bot
reply per thread message), saying what is missing, with its "Provide details" button; the
earlier question loses its button (no live button on a question asked again or answered).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block, MarkdownTextObject, SectionBlock

import bot.slack._messages as msg
from agents import PendingToolCall, SuspendedRunsPage
from bot.slack._services import Services
from bot.slack.blocks._blocks import (
    CardView,
    answer_text,
    as_dicts,
    question_blocks,
    question_fallback,
    superseded_question,
)
from bot.slack.blocks._mrkdwn import escape_truncated
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._render import Posted
from bot.slack.delivery._thread import SlackThread

logger = logging.getLogger(__name__)

SECTION_LIMIT = 3000
"""Slack's limit on a section's text."""
ANSWER_PIECE = 2900
"""Characters of the turn's answer per section (escaping may add a few)."""
ANSWER_SECTIONS = 2
"""Sections of the turn's answer above a question asked again (the rest is cut, marked …)."""
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
    services: Services,
    thread: SlackThread,
    before: list[Question],
    *,
    answered_run: str,
    posted: Posted,
) -> bool:
    """Ask the newest question of ``before`` again when the reply resumed none of them.

    ``answered_run``: the run the reply went on with. A reply that resumed a question goes on
    with that question's run (auto-resume decides it); any other reply starts a new run. So
    nothing needs reading again to tell. ``posted``: what the reply's own turn posted. One
    reply per thread message: the question is added to the turn's answer (that message is
    updated), posted alone when the turn posted nothing, and left as it is when the turn went
    on with a card or question of its own. The question asked again becomes the call's card;
    the earlier one loses its button, so only one live "Provide details" exists.
    """
    if not before or any(q.run_id == answered_run for q in before):
        return False  # no question waited, or the reply answered one of them
    if posted.abandoned or (posted.messages and posted.last_reply is None):
        return False  # the turn ended on a card, a question or a failure of its own
    newest = before[0]
    call = newest.call
    ref = ApprovalRef(
        run_id=newest.run_id, tool_call_id=call.tool_call_id, fingerprint=call.fingerprint
    )
    note = msg.ASK_AGAIN.format(
        tool=escape_truncated(call.tool_name, 80).replace("`", "'"),
        missing=missing_text(call.resume_schema or {}),
    )
    blocks: list[Block] = []
    if posted.last_reply is not None:
        blocks += answer_blocks(posted.last_reply[1])
    blocks.append(SectionBlock(text=MarkdownTextObject(text=note)))
    blocks += question_blocks(call.tool_name, call.suspend_payload, ref)
    ts = await _show(services, thread, call, blocks, posted)
    await _move_card(services, thread, newest, ts)
    return True


async def _show(
    services: Services,
    thread: SlackThread,
    call: PendingToolCall,
    blocks: list[Block],
    posted: Posted,
) -> str:
    """Into the turn's answer when there is one, else a message of its own; returns its ts."""
    if posted.last_reply is not None:
        ts, text = posted.last_reply
        try:
            await services.client.chat_update(
                channel=thread.channel, ts=ts, text=answer_text(text), blocks=as_dicts(blocks)
            )
            return ts
        except SlackApiError as exc:  # the answer stays; the question goes in a message of its own
            logger.warning("could not add the question to %s: %s", ts, exc.response.get("error"))
            blocks = blocks[len(answer_blocks(text)) :]
    response = await services.client.chat_postMessage(
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        text=question_fallback(call.tool_name, call.suspend_payload),
        blocks=as_dicts(blocks),
    )
    return str(response["ts"])


async def _move_card(services: Services, thread: SlackThread, question: Question, ts: str) -> None:
    """The message at ``ts`` becomes the question's card; the earlier one loses its button."""
    call = question.call
    earlier = await services.cards.find(question.run_id, call.tool_call_id)
    if earlier is not None and earlier.ts != ts:
        try:
            await services.client.chat_update(
                channel=earlier.channel,
                ts=earlier.ts,
                text=question_fallback(call.tool_name, call.suspend_payload),
                blocks=as_dicts(superseded_question(call.tool_name, call.suspend_payload)),
            )
        except SlackApiError as exc:
            logger.warning(
                "could not update question %s: %s", earlier.ts, exc.response.get("error")
            )
    view = CardView(
        ref=ApprovalRef(
            run_id=question.run_id, tool_call_id=call.tool_call_id, fingerprint=call.fingerprint
        ),
        tool_name=call.tool_name,
        args=call.args,
        requester=earlier.view.requester if earlier else thread.requester,
        agent_path=tuple(call.agent_path),
    )
    card = PostedCard(
        view=view, channel=thread.channel, ts=ts, thread_ts=thread.thread_ts, team=thread.team
    )
    await services.cards.record(
        card,
        thread_id=thread.thread_id,
        agent_id=services.agent.id,
        question=call.suspend_payload or {},
    )


def answer_blocks(text: str) -> list[Block]:
    """The turn's answer as sections (the message's blocks replace its text in Slack)."""
    pieces = [text[i : i + ANSWER_PIECE] for i in range(0, len(text), ANSWER_PIECE)]
    shown = pieces[:ANSWER_SECTIONS] if text.strip() else []
    if len(pieces) > ANSWER_SECTIONS:
        shown[-1] += "…"
    return [
        SectionBlock(text=MarkdownTextObject(text=escape_truncated(p, SECTION_LIMIT)))
        for p in shown
    ]


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
