"""The App Home tab at work: build "Waiting for you" for a user (``home_for``; published by
``_publish``), and turn a click on its buttons into a click on the card in its thread.

What is listed: calls of the served agent waiting for approval (``list_suspended_runs``, newest
first) that the gate lets the viewer approve now (``Agent.ask``: not expired, not approved by
them already, allowed by the decision policy: the answer a click would get, judged again inside
the claim): with a card or without one (its post
failed, or its run is in no Slack thread: started through the API or a script). A call without
a card is shown from the call itself, linked to its thread when it has one; a click on it posts
its card first (in its thread), or, in no thread, decides it from the Home tab alone.

What it costs is bounded by what the view can show, not by how much waits: runs are listed a
page at a time, newest first, until ``HOME_ITEMS`` approvals are found (at most ``SCAN_RUNS``
runs are looked at); a card is read from storage only for a call the viewer may decide; links
are built from the workspace's URL (read once, ``TeamURLs``), never asked of Slack per row.
After a decision, every affected viewer's view is built from the same pages and cards
(``Pending``): one ``views.publish`` per affected viewer is the only Slack call.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from slack_sdk.models.views import View

from agents import Approve, PendingToolCall, SuspendedRun, SuspendedRunsPage
from bot.ops._outage import unavailable
from bot.slack._services import Services
from bot.slack.blocks._home_view import HOME_ITEMS, Waiting, home_view
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks.standing._grant_blocks import with_grants
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_posts import card_in_thread, card_view, post_card_for, record_batch
from bot.slack.delivery._card_source import described
from bot.slack.delivery._team_urls import message_link
from bot.slack.delivery._thread import SlackThread
from bot.slack.receiving._payloads import BlockActions
from storage import utcnow

logger = logging.getLogger(__name__)

SCAN_PAGE = 100
"""Runs listed per storage query (fewer, larger pages scan SCAN_RUNS faster: a page costs a
count and a sorted read besides its rows)."""
SCAN_RUNS = 500
"""Runs looked at, at most, for one view (newest first); older ones are said to exist."""


@dataclass(frozen=True, kw_only=True)
class Listing:
    """What one viewer's Home tab lists."""

    waiting: list[Waiting]
    """At most ``HOME_ITEMS`` approvals, newest first."""
    more: bool
    """Older ones may wait too (not looked at, or past ``HOME_ITEMS``)."""
    shown: frozenset[tuple[str, str]] = frozenset()
    """``(run_id, tool_call_id)`` of each call in ``waiting``."""


class Pending:
    """The pending runs, newest first, read a page at a time as viewers need them, and the
    cards of the calls shown: one ``Pending`` serves every viewer of one refresh."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self._pages: dict[int, SuspendedRunsPage] = {}
        self._cards: dict[tuple[str, str], PostedCard | None] = {}

    async def page(self, number: int) -> SuspendedRunsPage:
        """Page ``number`` (from 0) of ``SCAN_PAGE`` runs."""
        if number not in self._pages:
            agent = self._services.agent
            self._pages[number] = await agent.list_suspended_runs(page=number, per_page=SCAN_PAGE)
        return self._pages[number]

    async def card(self, run_id: str, tool_call_id: str) -> PostedCard | None:
        """The call's card (one storage read, the first time)."""
        key = (run_id, tool_call_id)
        if key not in self._cards:
            self._cards[key] = await self._services.cards.find(run_id, tool_call_id)
        return self._cards[key]


@dataclass(frozen=True, kw_only=True)
class HomeView:
    """One viewer's Home tab, built, and what it lists."""

    view: View
    """The view to publish."""
    shown: frozenset[tuple[str, str]]
    """``(run_id, tool_call_id)`` of every call it lists."""


async def home_for(
    services: Services, user: str, pending: Pending | None = None
) -> HomeView | None:
    """The "Waiting for you" view for ``user`` (as of now). With storage (or Redis) down,
    nothing can be listed: a note for the user (what their last click came to) alone, and the
    outage is logged once; None when there is no note either (nothing to publish)."""
    services.home_viewers.add(user)
    note = services.home_viewers.note(user)
    try:
        listing = await waiting_for(services, user, pending)
        grants = await services.agent.list_grants(granted_by=user)
        view = with_grants(home_view(listing.waiting, more=listing.more, note=note), grants)
    except Exception as exc:
        service = unavailable(exc)
        if service is None or service == "slack":
            raise
        services.outages.down(service, exc)
        if note is None:
            return None
        return HomeView(view=home_view([], note=note), shown=frozenset())
    return HomeView(view=view, shown=listing.shown)


async def waiting_for(services: Services, user: str, pending: Pending | None = None) -> Listing:
    """The pending approvals ``user`` may decide, newest first, each with its card."""
    pending = pending or Pending(services)
    found: list[Waiting] = []
    shown: set[tuple[str, str]] = set()
    for number in range(SCAN_RUNS // SCAN_PAGE):
        listed = await pending.page(number)
        for run in listed.runs:
            for call in sorted(run.tool_calls, key=_newest, reverse=True):
                if not await may_approve(services, run.run_id, call, user):
                    continue
                card = await pending.card(run.run_id, call.tool_call_id)
                if card is not None and card.question is not None:
                    continue
                if len(found) == HOME_ITEMS:
                    return Listing(waiting=found, more=True, shown=frozenset(shown))
                found.append(await _waiting(services, run, card, call))
                shown.add((run.run_id, call.tool_call_id))
        if (number + 1) * SCAN_PAGE >= listed.total:
            return Listing(waiting=found, more=False, shown=frozenset(shown))
    return Listing(waiting=found, more=True, shown=frozenset(shown))


UNTHREADED = "-"
"""The channel (and ts) of a Home click on a call in no Slack thread (no Slack id looks like
this): decided from the Home tab alone."""


async def card_click(services: Services, click: BlockActions) -> BlockActions | None:
    """A click from the Home tab (no channel, no message) as a click on the card in its
    thread. A pending call without a card gets it posted in its thread first; a call in no
    Slack thread (or no longer pending, without a card) is a click on no message (channel
    ``UNTHREADED``: the claim's answer is told on the Home tab). None: not one of ours."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    if ref is None:
        return None
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    if card is None:
        call = await services.agent.pending_call(run_id=ref.run_id, tool_call_id=ref.tool_call_id)
        thread = None if call is None else await _thread_of(services, ref.run_id, call)
        if call is None or thread is None:  # decided meanwhile: the claim says how, on Home
            return click.on_message(channel=UNTHREADED, ts=UNTHREADED, thread_ts=UNTHREADED)
        card = await _card_now(services, thread, ref.run_id, call)
    return click.on_message(channel=card.channel, ts=card.ts, thread_ts=card.thread_ts)


async def _thread_of(services: Services, run_id: str, call: PendingToolCall) -> SlackThread | None:
    snapshot = await services.storage.load_snapshot(run_id)
    memory_thread = snapshot.thread_id if snapshot is not None else None
    return SlackThread.of(memory_thread, call.requested_by) if memory_thread else None


async def _card_now(
    services: Services, thread: SlackThread, run_id: str, call: PendingToolCall
) -> PostedCard:
    """The card of a call that has none on record, posted in its thread now (or only recorded
    when it is there already: posted before its record was written)."""
    async with services.locks.hold(thread.thread_id):
        card = await services.cards.find(run_id, call.tool_call_id)
        if card is not None:
            return card
        found = await card_in_thread(services, thread, run_id, call.tool_call_id)
        if found is not None and found[1]:  # a batch card's row: recorded as one
            await record_batch(services, thread, run_id, found[0], found[1])
        else:
            posted_ts = found[0] if found is not None else None
            await post_card_for(services, thread, run_id, call, posted_ts=posted_ts)
        card = await services.cards.find(run_id, call.tool_call_id)
    assert card is not None  # just recorded
    return card


def _newest(call: PendingToolCall) -> datetime:
    return call.suspended_at or datetime.min.replace(tzinfo=utcnow().tzinfo)


async def _waiting(
    services: Services, run: SuspendedRun, card: PostedCard | None, call: PendingToolCall
) -> Waiting:
    if card is not None:
        base = await services.team_urls.url(services.client, card.team)
        link = message_link(base, card.channel, card.ts, card.thread_ts)
        return Waiting(card=described(services, card.view, call), link=link)
    thread = SlackThread.of(run.thread_id, call.requested_by) if run.thread_id else None
    view = card_view(services, run.run_id, call, requester=call.requested_by)
    if thread is None:
        return Waiting(card=view, link=None, threaded=False)
    base = await services.team_urls.url(services.client, thread.team)
    return Waiting(card=view, link=message_link(base, thread.channel, thread.thread_ts))


async def may_approve(services: Services, run_id: str, call: PendingToolCall, user: str) -> bool:
    """Whether the gate lets ``user`` approve ``call`` now (expiry, who may decide, a quorum
    they approved already: the same answer a click would get)."""
    if not call.requires_approval:
        return False
    verdict = await services.agent.ask(Approve(), call=call, run_id=run_id, decided_by=user)
    return verdict.allowed
