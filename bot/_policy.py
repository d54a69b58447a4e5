"""Who may decide a card: the ``DecisionPolicy`` seam (``APPROVERS``, self-approval, Slack
Connect plug in here) and the default that lets anyone in the channel decide."""

from __future__ import annotations

from typing import Protocol

from bot._cards import PostedCard


class DecisionPolicy(Protocol):
    """Checked after the click is acked and before anything is claimed."""

    async def refusal(self, *, user: str, team: str | None, card: PostedCard | None) -> str | None:
        """None when ``user`` may decide ``card``; else the ephemeral text saying why not."""
        ...


class AnyoneMayDecide:
    """The default: anyone who can see the card may decide it."""

    async def refusal(self, *, user: str, team: str | None, card: PostedCard | None) -> str | None:
        return None
