"""The agent served when ``BOT_AGENT`` is unset (the full ops agent replaces it later)."""

from __future__ import annotations

from agents import Agent
from bot._settings import Settings

INSTRUCTIONS = (
    "You are countersign, an assistant in Slack. Answer briefly. Some tools need a person to "
    "approve them before they run: call them when asked, and say what happened afterwards."
)


def default_agent(settings: Settings) -> Agent:
    """A small agent on ``openai/<OPENAI_MODEL>``."""
    return Agent(
        id="countersign",
        name="countersign",
        instructions=INSTRUCTIONS,
        model=f"openai/{settings.openai_model}",
        default_options={"auto_resume_suspended_tools": True},
    )
