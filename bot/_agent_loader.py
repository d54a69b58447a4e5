"""``BOT_AGENT=module:attribute``: find the Agent to serve (``bot._assembly`` serves it)."""

from __future__ import annotations

import importlib

from agents import Agent
from bot._errors import BotError


class AgentLoadError(BotError):
    """``BOT_AGENT`` does not name an importable ``agents.Agent``."""


def import_agent(spec: str) -> Agent:
    """The ``Agent`` named by ``module:attribute`` (``attribute`` may be dotted)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AgentLoadError(
            f"BOT_AGENT must be module:attribute (for example myapp.agents:ops_agent), got {spec!r}"
        )
    try:
        target: object = importlib.import_module(module_name)
    except Exception as exc:
        raise AgentLoadError(
            f"BOT_AGENT {spec!r}: cannot import module {module_name!r} ({type(exc).__name__}: "
            f"{exc}); check the module path and that it is installed or on PYTHONPATH"
        ) from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AgentLoadError(
                f"BOT_AGENT {spec!r}: {module_name!r} has no attribute {attribute!r}"
            ) from None
    if not isinstance(target, Agent):
        raise AgentLoadError(
            f"BOT_AGENT {spec!r} is a {type(target).__name__}, not an agents.Agent; point it at "
            "an Agent instance (agent = Agent(id=..., model=...))"
        )
    return target
