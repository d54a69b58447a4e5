"""The title and suggested prompts of a new assistant thread.

From the ``SUGGESTED_PROMPTS`` setting when it is set, else derived from the served agent's
instructions: each line written as a list item (``- list the records``) is a prompt, up to
Slack's four; an agent whose instructions list nothing offers one "What can you do?".
"""

from __future__ import annotations

from dataclasses import dataclass

import bot.slack._messages as msg

MAX_PROMPTS = 4
"""Slack shows at most four suggested prompts."""
_TITLE_LIMIT = 75


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """One suggested prompt: what the button says and the message it sends."""

    title: str
    """The button's text."""
    message: str
    """What the person sends by clicking it."""

    def as_dict(self) -> dict[str, str]:
        """The shape ``assistant.threads.setSuggestedPrompts`` takes."""
        return {"title": self.title, "message": self.message}


def suggested_prompts(configured: tuple[str, ...], instructions: str) -> tuple[Prompt, ...]:
    """The prompts of a new assistant thread (``configured`` wins over ``instructions``)."""
    texts = list(configured) or _listed(instructions) or [msg.PROMPT_WHAT_CAN_YOU_DO]
    return tuple(Prompt(title=_short(t), message=t) for t in texts[:MAX_PROMPTS])


def thread_title(agent_name: str) -> str:
    """The title of a new assistant thread."""
    return msg.ASSISTANT_TITLE.format(agent=agent_name)[:_TITLE_LIMIT]


def _listed(instructions: str) -> list[str]:
    items = []
    for line in instructions.splitlines():
        stripped = line.strip()
        if stripped[:2] in ("- ", "* ", "• "):
            item = stripped[2:].strip()
            if item:
                items.append(item[:1].upper() + item[1:])
    return items


def _short(text: str) -> str:
    return text if len(text) <= _TITLE_LIMIT else text[: _TITLE_LIMIT - 1] + "…"
