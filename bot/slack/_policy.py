"""Who may decide a card: the ``DecisionPolicy`` seam, ``SettingsPolicy`` (``APPROVERS``,
``ALLOW_SELF_APPROVAL``, same workspace) and ``AnyoneMayDecide``.

Rules of ``SettingsPolicy``, checked in this order:

1. ``other-workspace``: the clicking user belongs to another workspace (Slack Connect).
2. Anyone may *provide details* to a suspended call (as anyone may reply in the thread), and
   a requester may always *decline* (withdraw) their own request: nothing runs.
3. ``self-approval``: with ``ALLOW_SELF_APPROVAL=false`` the requester may not approve (or
   edit and approve) their own request.
4. ``not-approver``: with ``APPROVERS`` set, only those users and members of those user groups
   decide; empty ``APPROVERS`` = anyone in the workspace.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

import bot.slack._messages as msg
from agents import Decision
from bot._settings import Settings
from bot.slack._cards import PostedCard
from bot.slack._usergroups import UserGroups

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


Rule = Literal["other-workspace", "self-approval", "not-approver"]
"""Which rule refused a decision (recorded in the audit log)."""


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """Why a user may not decide: the rule and the ephemeral text that explains it."""

    rule: str
    """``other-workspace``, ``self-approval``, ``not-approver``, or a custom policy's name."""
    text: str
    """Shown to the user (ephemeral)."""


class DecisionPolicy(Protocol):
    """Checked after the click is acked and before anything is claimed (and again on submit)."""

    async def refusal(
        self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
    ) -> Refusal | None:
        """None when ``user`` (of workspace ``team``) may do ``choice`` on ``card``."""
        ...


class AnyoneMayDecide:
    """Anyone who can see the card may decide it."""

    async def refusal(
        self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
    ) -> Refusal | None:
        return None


class SettingsPolicy:
    """The configured rules (see the module docstring)."""

    def __init__(
        self, settings: Settings, client: AsyncWebClient, *, groups: UserGroups | None = None
    ) -> None:
        self._approvers = frozenset(a for a in settings.approvers if not a.startswith("S"))
        self._groups = tuple(a for a in settings.approvers if a.startswith("S"))
        self._self_ok = settings.allow_self_approval
        self._client = client
        self._user_groups = groups or UserGroups(client)
        self._home_team: str | None = None

    async def refusal(
        self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
    ) -> Refusal | None:
        home = await self._home()  # unknown (auth.test failing): nobody can be verified
        if home is None or team is None or team != home:
            return Refusal(rule="other-workspace", text=msg.REFUSED_OTHER_WORKSPACE)
        if choice == "provide":
            return None  # like a reply in the thread, which anyone may send
        requester = card.view.requester if card else None
        own = requester is not None and requester == user
        if own and choice == "decline":
            return None
        if own and not self._self_ok and choice in ("approve", "edit"):
            return Refusal(rule="self-approval", text=msg.REFUSED_SELF_APPROVAL)
        if (self._approvers or self._groups) and not await self._is_approver(user):
            return Refusal(rule="not-approver", text=msg.REFUSED_NOT_APPROVER)
        return None

    async def _is_approver(self, user: str) -> bool:
        if user in self._approvers:
            return True
        for group in self._groups:
            if user in await self._user_groups.members(group):
                return True
        return False

    async def _home(self) -> str | None:
        """The bot's own workspace (``auth.test``, asked once)."""
        if self._home_team is None:
            try:
                self._home_team = (await self._client.auth_test()).get("team_id")
            except SlackApiError as exc:
                logger.warning("auth.test failed: %s", exc.response.get("error"))
        return self._home_team
