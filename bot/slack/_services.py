"""``Services``: what every listener and background job of the bot works with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, Runner
from bot._settings import Settings
from bot.coordination._dedupe import Deduper
from bot.coordination._locks import LocalThreadLocks, ThreadLocks
from bot.ops._outage import Outages
from bot.policy import Policy
from bot.slack._agents import ServedAgents
from bot.slack.blocks._home_view import HomeViewers
from bot.slack.deciding._workspace import EdgePolicy, SettingsPolicy
from bot.slack.delivery._card_index import CardStore
from bot.slack.delivery._team_urls import TeamURLs
from bot.slack.delivery.home._pacing import HomeQueue
from bot.slack.surfaces._names import Names
from bot.slack.surfaces._status_keeper import StatusKeeper
from bot.slack.surfaces._support import StreamSupport
from storage import Storage


@dataclass(frozen=True, kw_only=True)
class Services:
    """The bot's dependencies, built once at start (see ``create_services``)."""

    agent: ServedAgents
    """The agents served: the one Slack conversations talk to (``agent.main``) and, with the
    gateway on, the gateway agent; every edge asks it about any agent's calls."""
    storage: Storage
    """The agent's storage: runs, memory, audit, de-duplication marks."""
    client: AsyncWebClient
    """Slack Web API client (retries 429s and connection errors)."""
    settings: Settings
    """The configuration."""
    locks: ThreadLocks
    """One Slack thread at a time."""
    dedupe: Deduper
    """Each delivery once."""
    cards: CardStore
    """Where approval cards were posted."""
    policy: Policy
    """Who may decide and what a card says about it: the served agent's decision policy (checked
    by the runtime inside every decision; the edges ask it only to answer early), the policy
    file's rule for a call, and whether Approve confirms."""
    workspace: EdgePolicy
    """What only the Slack edge knows about the clicking user (their workspace)."""
    stream_interval: float = 1.0
    """Seconds between two updates of an answer posted and updated (channel threads)."""
    append_interval: float = 0.5
    """Seconds between two ``chat.appendStream`` calls of an answer streamed in an assistant
    thread."""
    streaming: StreamSupport = field(default_factory=StreamSupport)
    """Whether Slack streams answers here (off for good after Slack said it does not)."""
    outages: Outages = field(default_factory=Outages)
    """Which dependencies are down now (each outage logged once, and its recovery)."""
    home_viewers: HomeViewers = field(default_factory=HomeViewers)
    """Who opened the App Home tab here, and which calls each one's view lists."""
    homes: HomeQueue[Any] = field(default_factory=HomeQueue)
    """The Home tabs waiting to be published again (coalesced per viewer), at Slack's pace."""
    names: Names = field(default_factory=Names)
    """People's and user groups' names for plain text (the status line), looked up once."""
    statuses: StatusKeeper = field(default_factory=StatusKeeper)
    """The waiting status lines of assistant threads, set again before Slack clears them."""
    team_urls: TeamURLs = field(default_factory=TeamURLs)
    """Each workspace's URL (``auth.test``, read once): links to cards cost no Slack call."""

    @property
    def runner(self) -> Runner:
        """The one background runner: the served agent's. Listeners hand their work to it, the
        agent starts its runs on it; it is bounded and closed (drained) when the app stops."""
        return self.agent.runner


def create_services(
    *,
    agent: Agent | ServedAgents,
    policy: Policy,
    client: AsyncWebClient,
    settings: Settings,
    storage: Storage | None = None,
    locks: ThreadLocks | None = None,
    workspace: EdgePolicy | None = None,
    dedupe: Deduper | None = None,
    stream_interval: float = 1.0,
    append_interval: float = 0.5,
) -> Services:
    """Assemble ``Services`` around the served agent (its storage is used unless one is given).

    ``agent`` is built already, with its rules (``bot._assembly.serve_agent``): nothing is
    installed on it here; several agents on one storage come as one ``ServedAgents``.
    ``policy`` is who may decide as the edges ask it (built with the agent:
    ``ServedAgent.policy``). ``locks`` and ``dedupe`` default to this process / the
    agent's storage; pass shared ones (e.g. Redis-backed) to run several instances.
    ``workspace`` defaults to the edge's own check (same workspace).
    """
    served = agent if isinstance(agent, ServedAgents) else ServedAgents(agent)
    store = storage if storage is not None else served.storage
    return Services(
        agent=served,
        storage=store,
        client=client,
        settings=settings,
        locks=locks or LocalThreadLocks(),
        dedupe=dedupe or Deduper(store),
        cards=CardStore(store),
        policy=policy,
        workspace=workspace or SettingsPolicy(client),
        stream_interval=stream_interval,
        append_interval=append_interval,
    )
