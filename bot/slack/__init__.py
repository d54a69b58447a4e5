"""The Slack edge (SPEC 6): listeners, approval cards and modals, thread replies, expiry.

``create_bolt_app`` registers the listeners on a bolt ``AsyncApp``; ``create_web_app`` serves
it at ``/slack/events`` with ``/healthz``. Everything a listener needs arrives in ``Services``
(``create_services``). ``Background`` sweeps expired approvals and recovers crashed runs;
``publish`` shows a decision taken elsewhere (the HTTP API) on its card and in its thread;
``shared_coordination`` shares de-duplication and thread locks across instances (Redis).
"""

from bot.slack._app import (
    BOLT_APP,
    EVENTS_PATH,
    HEALTH_CHECKS,
    SERVICES,
    create_bolt_app,
    create_web_app,
)
from bot.slack._expiry import Background
from bot.slack._ids import APPROVE_ACTION, DECLINE_ACTION
from bot.slack._policy import AnyoneMayDecide, EdgePolicy, Refusal, SettingsPolicy
from bot.slack._publish import OutsideDecision, publish
from bot.slack._rules import ApprovalRules
from bot.slack._services import Services, create_services
from bot.slack._shared import shared_coordination
from bot.slack._webclient import create_web_client

__all__ = [
    "APPROVE_ACTION",
    "BOLT_APP",
    "DECLINE_ACTION",
    "EVENTS_PATH",
    "HEALTH_CHECKS",
    "SERVICES",
    "AnyoneMayDecide",
    "ApprovalRules",
    "Background",
    "EdgePolicy",
    "OutsideDecision",
    "Refusal",
    "Services",
    "SettingsPolicy",
    "create_bolt_app",
    "create_services",
    "create_web_app",
    "create_web_client",
    "publish",
    "shared_coordination",
]
