"""``Names``: people's and user groups' names, for the plain text Slack shows as it is.

In mrkdwn the bot writes ``<@U…>``, ``<!subteam^S…>`` and ``<#C…>`` and Slack shows the names,
at no cost. Plain text (the assistant status line, a task card's title) shows no mention as a
name, so there the name is looked up: ``users.info`` (scope ``users:read``) for a person,
``usergroups.list`` (``usergroups:read``, every group in one call) for a group's handle. Each is
cached for ``ttl`` seconds, at most ``size`` names (a 5,000-person workspace costs one call per
person named, once an hour at most); a lookup Slack refuses is cached too, and that name is left
out (the caller words the text without it).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

NAME_TTL_SECONDS = 3600.0
"""How long a looked-up name is used before it is looked up again."""
MAX_NAMES = 20_000
"""Most names kept (the least recently used go first)."""


class Names:
    """Cached names of people (``U…``/``W…``) and user groups (``S…``)."""

    def __init__(
        self,
        *,
        ttl: float = NAME_TTL_SECONDS,
        size: int = MAX_NAMES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._size = size
        self._clock = clock
        self._names: OrderedDict[str, tuple[str | None, float]] = OrderedDict()
        self._groups_at: float | None = None

    async def mentions(self, client: AsyncWebClient, ids: Sequence[str]) -> list[str]:
        """``@name`` for each of ``ids`` Slack names (people and groups), in order; the ones it
        does not name are left out."""
        shown = []
        for found in ids:
            name = await self.name(client, found)
            if name:
                shown.append(f"@{name}")
        return shown

    async def name(self, client: AsyncWebClient, found: str) -> str | None:
        """The display name of a person, the handle of a group; None when Slack does not say."""
        cached = self._cached(found)
        if cached is not None:
            return cached[0]
        if _is_group(found):
            await self._load_groups(client)
            cached = self._cached(found)
            if cached is None:
                self._keep(found, None)
                return None
            return cached[0]
        name = await self._user(client, found)
        self._keep(found, name)
        return name

    def forget(self, found: str | None = None) -> None:
        """Drop the cached name of ``found`` (None: every group's, e.g. a group renamed)."""
        if found is not None:
            self._names.pop(found, None)
            return
        for key in [k for k in self._names if _is_group(k)]:
            del self._names[key]
        self._groups_at = None

    def _cached(self, found: str) -> tuple[str | None, float] | None:
        entry = self._names.get(found)
        if entry is None or self._clock() - entry[1] >= self._ttl:
            return None
        self._names.move_to_end(found)
        return entry

    def _keep(self, found: str, name: str | None) -> None:
        self._names[found] = (name, self._clock())
        self._names.move_to_end(found)
        while len(self._names) > self._size:
            self._names.popitem(last=False)

    async def _user(self, client: AsyncWebClient, user: str) -> str | None:
        try:
            answer = await client.users_info(user=user)
        except SlackApiError as exc:
            logger.info("no name for %s: %s", user, exc.response.get("error"))
            return None
        person = answer.get("user") or {}
        profile = person.get("profile") or {}
        for name in (profile.get("display_name"), profile.get("real_name"), person.get("name")):
            if isinstance(name, str) and name.strip():
                return name.strip()
        return None

    async def _load_groups(self, client: AsyncWebClient) -> None:
        """Every group's handle, in one call (at most once per ``ttl``)."""
        if self._groups_at is not None and self._clock() - self._groups_at < self._ttl:
            return
        self._groups_at = self._clock()
        try:
            answer = await client.usergroups_list()
        except SlackApiError as exc:
            logger.info("no user group names: %s", exc.response.get("error"))
            return
        for group in answer.get("usergroups") or []:
            handle = group.get("handle") or group.get("name")
            if isinstance(group.get("id"), str) and isinstance(handle, str) and handle:
                self._keep(group["id"], handle)


def _is_group(found: str) -> bool:
    return found[:1] == "S" and found.isalnum()
