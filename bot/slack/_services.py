"""``Services``: what every listener and background job of the bot works with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, DecisionPolicy, PendingToolCall, Runner
from bot._settings import Settings
from bot.coordination._dedupe import Deduper
from bot.coordination._locks import LocalThreadLocks, ThreadLocks
from bot.ops._outage import Outages
from bot.policy import CallPolicy
from bot.policy._approval_rules import ApprovalRules
from bot.policy._card_rules import CardRules
from bot.slack.blocks._home_view import HomeViewers
from bot.slack.deciding._workspace import EdgePolicy, SettingsPolicy
from bot.slack.delivery._card_index import CardStore
from storage import Storage
from tools import Tool


@dataclass(frozen=True, kw_only=True)
class Services:
    """The bot's dependencies, built once at start (see ``create_services``)."""

    agent: Agent
    """The agent served in Slack."""
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
    policy: EdgePolicy
    """What only the edge knows about the clicking user (their workspace)."""
    rules: DecisionPolicy
    """Who may decide: the served agent's decision policy, checked by the runtime inside every
    decision (the bot's ``ApprovalRules`` unless the agent brought its own). The edge calls it
    too, only to answer early (opening a modal)."""
    card_rules: Callable[[PendingToolCall, Tool | None], CardRules]
    """Who may approve a call and whether Approve confirms, as its card shows it
    (``ApprovalRules.for_card``)."""
    call_policy: CallPolicy
    """The policy file matched against calls: ``call_policy.confirm_for(call)`` says whether
    Approve asks for confirmation, ``call_policy.for_call(call)`` who may approve."""
    stream_interval: float = 1.0
    """Seconds between two updates of a streamed answer."""
    outages: Outages = field(default_factory=Outages)
    """Which dependencies are down now (each outage logged once, and its recovery)."""
    home_viewers: HomeViewers = field(default_factory=HomeViewers)
    """Who opened the App Home tab here: republished after each decision."""

    @property
    def runner(self) -> Runner:
        """The one background runner: the served agent's. Listeners hand their work to it, the
        agent starts its runs on it; it is bounded and closed (drained) when the app stops."""
        return self.agent.runner


def create_services(
    *,
    agent: Agent,
    approval_rules: ApprovalRules,
    call_policy: CallPolicy,
    client: AsyncWebClient,
    settings: Settings,
    storage: Storage | None = None,
    locks: ThreadLocks | None = None,
    policy: EdgePolicy | None = None,
    dedupe: Deduper | None = None,
    stream_interval: float = 1.0,
) -> Services:
    """Assemble ``Services`` around the served agent (its storage is used unless one is given).

    ``agent`` is built already, with its rules (``bot._assembly.serve_agent``): nothing is
    installed on it here. ``approval_rules`` and ``call_policy`` are the ones it was built
    with, for what cards show. ``locks`` and ``dedupe`` default to this process / the agent's
    storage; pass shared ones (e.g. Redis-backed) to run several instances. ``policy``
    defaults to the edge's own check (same workspace).
    """
    store = storage if storage is not None else agent.storage
    return Services(
        agent=agent,
        storage=store,
        client=client,
        settings=settings,
        locks=locks or LocalThreadLocks(),
        dedupe=dedupe or Deduper(store),
        cards=CardStore(store),
        policy=policy or SettingsPolicy(client),
        rules=agent.decision_policy or approval_rules,
        card_rules=approval_rules.for_card,
        call_policy=call_policy,
        stream_interval=stream_interval,
    )
