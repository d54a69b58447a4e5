"""The Slack edge of countersign: approval cards, thread replies, ``python -m bot``.

Example:
    >>> from bot import load_settings
    >>> settings = load_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"})
    >>> settings.mode
    'http'
"""

from bot._agent_loader import AgentLoadError
from bot._app import BOLT_APP, HEALTH_CHECKS, SERVICES, create_bolt_app, create_web_app
from bot._errors import BotConfigError, BotError
from bot._ids import APPROVE_ACTION, DECLINE_ACTION
from bot._policy import AnyoneMayDecide, DecisionPolicy, Refusal, SettingsPolicy
from bot._runner import Runner, RunnerClosed
from bot._services import Services, create_services
from bot._settings import Settings, load_settings

__all__ = [
    "APPROVE_ACTION",
    "BOLT_APP",
    "DECLINE_ACTION",
    "HEALTH_CHECKS",
    "SERVICES",
    "AgentLoadError",
    "AnyoneMayDecide",
    "BotConfigError",
    "BotError",
    "DecisionPolicy",
    "Refusal",
    "Runner",
    "RunnerClosed",
    "Services",
    "Settings",
    "SettingsPolicy",
    "create_bolt_app",
    "create_services",
    "create_web_app",
    "load_settings",
]
