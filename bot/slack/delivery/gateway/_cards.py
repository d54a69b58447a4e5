"""The cards of gateway calls (SPEC 17): new messages in ``GATEWAY_CHANNEL``.

A call the gateway holds has no Slack thread of its own (it came from an MCP client or a coding
agent's hook), so its card is posted as a message of its own in the gateway's channel, saying
where the call came from, and is recorded like any card: it is then its own thread (a
reminder, an escalation, a call presented again, go under it), and every surface finds and
decides it as any other (buttons, Home tab, API, expiry). A call that a standing grant approves
gets the compact "auto-approved" line there instead. ``link`` is where a client is told to go.

Posting is once across instances (a mark in storage), so a client retrying after the card
failed to post (Slack was down) gets it posted, never twice.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from agents import PendingToolCall, ToolCallGrantedChunk
from bot.slack._ids import thread_id
from bot.slack._services import Services
from bot.slack.blocks._blocks import approval_card, approval_fallback, as_dicts
from bot.slack.blocks.standing._grant_blocks import granted_fallback, granted_line
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_posts import card_metadata, card_view
from bot.slack.delivery._team_urls import message_link

logger = logging.getLogger(__name__)

POSTING_SECONDS = 60.0
"""How long one instance's attempt to post a call's card keeps others from posting it."""


class GatewayCards:
    """Posts and finds the cards of gateway calls in ``channel``."""

    def __init__(self, services: Services, channel: str) -> None:
        self._services = services
        self._channel = channel
        self._team: str | None = None

    async def present(self, run_id: str, call: PendingToolCall, origin: str) -> None:
        """Post the card of a held call, unless it has one (or another instance posts it)."""
        services = self._services
        try:
            if await services.cards.find(run_id, call.tool_call_id) is not None:
                return
            mark = f"gateway:card:{run_id}:{call.tool_call_id}"
            if not await services.storage.add_if_absent(mark, "1", POSTING_SECONDS):
                return
            team = await self._team_id()
            view = replace(
                card_view(services, run_id, call, requester=call.requested_by), origin=origin
            )
            posted = await services.client.chat_postMessage(
                channel=self._channel,
                text=approval_fallback(view),
                blocks=as_dicts(approval_card(view)),
                metadata=card_metadata(run_id, call.tool_call_id),
            )
            ts, channel = str(posted["ts"]), str(posted.get("channel") or self._channel)
            card = PostedCard(view=view, channel=channel, ts=ts, thread_ts=ts, team=team)
            await services.cards.record(
                card, thread_id=thread_id(team, channel, ts), agent_id=call.agent_path[0]
            )
        except Exception as exc:  # the call still pends: the Home tab and a retry find it
            logger.warning("gateway: could not post the card of run %s: %s", run_id, exc)

    async def granted(self, chunk: ToolCallGrantedChunk, origin: str) -> None:
        """A call a standing grant approved: the compact line, in the gateway's channel."""
        try:
            await self._services.client.chat_postMessage(
                channel=self._channel,
                text=granted_fallback(chunk),
                blocks=as_dicts(granted_line(chunk)),
            )
        except Exception as exc:
            logger.warning("gateway: could not post the grant line of %s: %s", chunk.run_id, exc)

    async def link(self, run_id: str, tool_call_id: str) -> str | None:
        """The link to the call's card (None: it has none)."""
        services = self._services
        card = await services.cards.find(run_id, tool_call_id)
        if card is None:
            return None
        base = await services.team_urls.url(services.client, card.team)
        return message_link(base, card.channel, card.ts)

    async def _team_id(self) -> str:
        if self._team is None:
            answer = await self._services.client.auth_test()
            self._team = str(answer.get("team_id") or "")
        return self._team
