"""The bot of countersign: the Slack edge, the HTTP API, the local workspace, ``python -m bot``.

The parts live in sub-packages: ``bot.slack`` (the Slack edge), ``bot.api`` (the HTTP API),
``bot.local`` (the local workspace, an emulated Slack), ``bot.demo`` (the built-in ops agent and
its offline model), ``bot.policy`` (who may decide), ``bot.coordination`` (de-duplication and
thread locks across instances), ``bot.ops`` (metrics, readiness, outages, drain, tracing) and
``bot.background`` (expiry sweeps, recovery, the outbox). This top level only wires them
together: ``_settings`` reads the configuration, ``_assembly`` builds the served agent once
(``serve_agent``), ``_serve`` starts everything, ``__main__`` is ``python -m bot``.

Example:
    >>> from bot import load_settings
    >>> settings = load_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"})
    >>> settings.mode
    'http'
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot._agent_loader import AgentLoadError
    from bot._assembly import ServedAgent, serve_agent
    from bot._errors import BotConfigError, BotError
    from bot._settings import Settings, load_settings
    from bot.policy import Policy, Refusal
    from bot.policy._approval_rules import ApprovalRules
    from bot.slack import (
        APPROVE_ACTION,
        BOLT_APP,
        DECLINE_ACTION,
        HEALTH_CHECKS,
        SERVICES,
        AnyoneMayDecide,
        EdgePolicy,
        Services,
        SettingsPolicy,
        Superseded,
        create_bolt_app,
        create_services,
        create_web_app,
    )

__all__ = [
    "APPROVE_ACTION",
    "BOLT_APP",
    "DECLINE_ACTION",
    "HEALTH_CHECKS",
    "SERVICES",
    "AgentLoadError",
    "AnyoneMayDecide",
    "ApprovalRules",
    "BotConfigError",
    "BotError",
    "EdgePolicy",
    "Policy",
    "Refusal",
    "ServedAgent",
    "Services",
    "Settings",
    "SettingsPolicy",
    "Superseded",
    "create_bolt_app",
    "create_services",
    "create_web_app",
    "load_settings",
    "serve_agent",
]


def __getattr__(name: str) -> Any:
    """The public names, imported when one is first used: a command that needs little
    (``python -m bot hook``, run before every tool call of a coding agent) starts without
    importing the Slack edge."""
    if name not in __all__:
        raise AttributeError(f"module 'bot' has no attribute {name!r}")
    from bot import _public

    value = getattr(_public, name)
    globals()[name] = value
    return value
