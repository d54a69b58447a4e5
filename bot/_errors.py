"""Errors of the bot (the wiring and every part under ``bot/``).

BotError
├── BotConfigError   the environment cannot start the bot (every problem listed at once)
└── AgentLoadError   BOT_AGENT names no importable Agent (bot._agent_loader)
"""

from __future__ import annotations

from collections.abc import Sequence


class BotError(Exception):
    """Root of every error raised by the ``bot`` package."""


class BotConfigError(BotError):
    """The configuration is invalid; ``problems`` lists every problem with how to fix it."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"countersign cannot start, fix the configuration:\n{lines}")
