"""What only the Slack edge can check about a decision: the clicking user's workspace.

Who may decide (``APPROVERS``, ``ALLOW_SELF_APPROVAL``) is NOT checked here: the runtime checks
it inside every decision against the stored call (``bot.policy._approval_rules``). The edge keeps
the one rule the runtime cannot know about:

- ``other-workspace``: the clicking user belongs to another workspace (Slack Connect), or the
  bot's own workspace is unknown (``auth.test`` failing: nobody can be verified).

It answers with the same ``bot.policy.Refusal`` as every other check of who may decide.

``EdgePolicy`` is the seam (tests plug their own); ``SettingsPolicy`` is the rule above and
``AnyoneMayDecide`` lets every click through to the runtime.
"""

from __future__ import annotations

import logging
from typing import Literal, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

import bot.slack._messages as msg
from agents import Decision
from bot.policy import Refusal
from bot.slack.delivery._card_index import PostedCard

logger = logging.getLogger(__name__)

Choice = Literal["approve", "decline", "edit", "provide"]
"""What the user is trying to do: approve, decline, approve with edits, answer a question."""


def choice_of(decision: Decision) -> Choice:
    """The policy's view of a decision: approving with edited arguments is ``edit``, resuming is
    ``provide``; an expiry is a decline (nobody asks the policy about it)."""
    if decision.kind == "approve":
        return "approve" if decision.args is None else "edit"
    if decision.kind == "resume":
        return "provide"
    return "decline"


class EdgePolicy(Protocol):
    """Checked after the click is acked and before the runtime is asked (and again on submit)."""

    async def refusal(
        self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
    ) -> Refusal | None:
        """None when ``user`` (of workspace ``team``) may go on to the runtime's own check."""
        ...


class AnyoneMayDecide:
    """Every click goes on to the runtime's check."""

    async def refusal(
        self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
    ) -> Refusal | None:
        return None


class SettingsPolicy:
    """Only members of the bot's own workspace decide (see the module docstring)."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._home_team: str | None = None

    async def refusal(
        self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
    ) -> Refusal | None:
        home = await self._home()  # unknown (auth.test failing): nobody can be verified
        if home is None or team is None or team != home:
            return Refusal(rule="other-workspace", text=msg.REFUSED_OTHER_WORKSPACE)
        return None

    async def _home(self) -> str | None:
        """The bot's own workspace (``auth.test``, asked once)."""
        if self._home_team is None:
            try:
                self._home_team = (await self._client.auth_test()).get("team_id")
            except SlackApiError as exc:
                logger.warning("auth.test failed: %s", exc.response.get("error"))
        return self._home_team
