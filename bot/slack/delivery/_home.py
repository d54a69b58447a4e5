"""The App Home tab at work: publish "Waiting for you" for a user, again for every viewer after
a decision, and turn a click on its buttons into a click on the card in its thread.

What is listed: every call of the served agent waiting for approval (``list_suspended_runs``,
newest first) that has a card, has not expired, is not already approved by the viewer (quorum),
and that the decision policy lets the viewer approve
(``services.policy.refusal(call, user, "approve")``, the same rules the runtime checks inside the
claim).
"""

from __future__ import annotations

import logging
from datetime import datetime

from slack_sdk.errors import SlackApiError

from agents import PendingToolCall
from bot.slack._services import Services
from bot.slack.blocks._home_view import Waiting, home_view
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.delivery._card_source import described
from bot.slack.receiving._payloads import BlockActions
from storage import utcnow

logger = logging.getLogger(__name__)

_PAGES = 5
_PER_PAGE = 100


async def publish_home(services: Services, user: str) -> None:
    """``views.publish`` the "Waiting for you" view for ``user``; failures are logged."""
    services.home_viewers.add(user)
    try:
        view = home_view(await waiting_for(services, user))
        await services.client.views_publish(user_id=user, view=view)
    except SlackApiError as exc:
        logger.warning("could not publish the Home tab: %s", exc.response.get("error"))


async def refresh_homes(services: Services) -> None:
    """Publish the Home tab again for everyone who opened it here (after a decision)."""
    for user in services.home_viewers.users():
        await publish_home(services, user)


async def waiting_for(services: Services, user: str) -> list[Waiting]:
    """The pending approvals ``user`` may decide, newest first, each with its card."""
    now = utcnow()
    found: list[tuple[datetime, Waiting]] = []
    for page in range(_PAGES):  # pages count from 0
        listed = await services.agent.list_suspended_runs(page=page, per_page=_PER_PAGE)
        for run in listed.runs:
            for call in run.tool_calls:
                if not await _may_approve(services, call, user, now):
                    continue
                card = await services.cards.find(run.run_id, call.tool_call_id)
                if card is None or card.question is not None:
                    continue
                link = await _link(services, card.channel, card.ts)
                waiting = Waiting(card=described(services, card.view, call), link=link)
                found.append((call.suspended_at or run.suspended_at, waiting))
        if (page + 1) * _PER_PAGE >= listed.total:
            break
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [w for _, w in found]


async def card_click(services: Services, click: BlockActions) -> BlockActions | None:
    """A click from the Home tab (no channel, no message) as a click on the card in its
    thread; None when the approval has no card any more."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    card = None if ref is None else await services.cards.find(ref.run_id, ref.tool_call_id)
    if card is None:
        return None
    return click.on_message(channel=card.channel, ts=card.ts, thread_ts=card.thread_ts)


async def _may_approve(services: Services, call: PendingToolCall, user: str, now: datetime) -> bool:
    if not call.requires_approval or user in call.approved_by:
        return False
    if call.expires_at is not None and call.expires_at <= now:
        return False
    return await services.policy.refusal(call, user, "approve") is None


async def _link(services: Services, channel: str, ts: str) -> str | None:
    """The card's permalink (``chat.getPermalink``, no scope needed), else Slack's archive link."""
    try:
        answer = await services.client.chat_getPermalink(channel=channel, message_ts=ts)
        permalink = answer.get("permalink")
        if isinstance(permalink, str) and permalink.startswith("http") and _plain(permalink):
            return permalink
    except SlackApiError as exc:
        logger.info("no permalink for a card: %s", exc.response.get("error"))
    if not channel.isalnum():
        return None
    return f"https://slack.com/archives/{channel}/p{ts.replace('.', '')}"


def _plain(url: str) -> bool:
    """Nothing in ``url`` that would end a mrkdwn link early."""
    return not any(c in url for c in "<>| \n")
