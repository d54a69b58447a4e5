"""The card a click was on, when no card record says what it showed.

A card is recorded right after it is posted; a process that died in between, or storage failing
then, leaves a card in Slack without its record. A click on it is still decided like any other,
and the card it updates is drawn from storage: from the pending call (its tool's title, who
asked, the rules), and recorded where it is, so every later update finds it (never "✅
Approved: ?").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.slack._ids import thread_id
from bot.slack._services import Services
from bot.slack.blocks._blocks import CardView
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_posts import card_view
from bot.slack.delivery._thread import SlackThread


@dataclass(frozen=True, kw_only=True)
class Clicked:
    """Where the click was: the card's message and thread."""

    team: str
    channel: str
    message_ts: str | None
    thread_ts: str | None
    is_question: bool = False
    """The click answers a tool's question (not an approval card)."""


async def card_from_call(services: Services, ref: ApprovalRef, where: Clicked) -> PostedCard | None:
    """The clicked card of a call with no card record, drawn from the pending call and
    recorded; None when the call is not pending for approval (the claim will say why)."""
    if where.message_ts is None or where.thread_ts is None or where.is_question:
        return None
    call = await services.agent.pending_call(run_id=ref.run_id, tool_call_id=ref.tool_call_id)
    if call is None or not call.requires_approval:
        return None
    card = PostedCard(
        view=card_view(services, ref.run_id, call, requester=call.requested_by),
        channel=where.channel,
        ts=where.message_ts,
        thread_ts=where.thread_ts,
        team=where.team,
    )
    thread = thread_id(where.team, where.channel, where.thread_ts)
    await services.cards.record(card, thread_id=thread, agent_id=services.agent.id)
    return card


def unrecorded_card(
    ref: ApprovalRef,
    where: Clicked,
    question: tuple[str, dict[str, Any] | None] | None,
    thread: SlackThread,
) -> PostedCard:
    """The clicked message when neither a record nor the call says what it showed (a question
    answered: its tool and what it asked come with the click)."""
    tool, asked = question or (ref.tool_call_id, None)
    return PostedCard(
        view=CardView(ref=ref, tool_name=tool, args={}),
        channel=where.channel,
        ts=where.message_ts or "",
        thread_ts=thread.thread_ts,
        team=thread.team,
        question=None if question is None else asked or {},
    )
