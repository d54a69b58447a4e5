"""The Slack edge (SPEC 6): listeners, approval cards and modals, thread replies, expiry.

``create_bolt_app`` registers the listeners on a bolt ``AsyncApp``; ``create_web_app`` serves
it at ``/slack/events`` with ``/healthz``. Everything a listener needs arrives in ``Services``
(``create_services``). ``publish`` shows a decision taken elsewhere (the HTTP API) on its card
and in its thread.

A click is read by following the folders: ``receiving/`` (the bolt app, listeners, payloads) →
``deciding/`` (clicks, modals, thread replies → one runtime decision) → ``delivery/`` (cards
updated, the run's stream posted, the card index, the outbox, the Home tab), with every Block Kit
builder in ``blocks/`` and Slack's agent surfaces in ``surfaces/`` (assistant threads' title,
prompts and status line, answers streamed with task cards). Who may decide lives in
``bot.policy``; locks and de-duplication in ``bot.coordination``; readiness and outages in
``bot.ops``; the periodic work in ``bot.background``.
"""

from bot.slack._agents import ServedAgents
from bot.slack._ids import APPROVE_ACTION, DECLINE_ACTION
from bot.slack._services import Services, create_services
from bot.slack.deciding._workspace import AnyoneMayDecide, EdgePolicy, SettingsPolicy
from bot.slack.delivery._extended import show_extension
from bot.slack.delivery._publish import publish
from bot.slack.delivery._webclient import create_web_client
from bot.slack.delivery.gateway._cards import GatewayCards
from bot.slack.delivery.sending._fence import Superseded
from bot.slack.receiving._app import (
    BOLT_APP,
    EVENTS_PATH,
    HEALTH_CHECKS,
    SERVICES,
    create_bolt_app,
    create_web_app,
)

__all__ = [
    "APPROVE_ACTION",
    "BOLT_APP",
    "DECLINE_ACTION",
    "EVENTS_PATH",
    "HEALTH_CHECKS",
    "SERVICES",
    "AnyoneMayDecide",
    "EdgePolicy",
    "GatewayCards",
    "ServedAgents",
    "Services",
    "SettingsPolicy",
    "Superseded",
    "create_bolt_app",
    "create_services",
    "create_web_app",
    "create_web_client",
    "publish",
    "show_extension",
]
