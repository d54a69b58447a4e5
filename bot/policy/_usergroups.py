"""Members of Slack user groups (``S…`` ids in ``APPROVERS``), cached for at most 30 s.

``usergroups.users.list`` needs the ``usergroups:read`` scope and is rate limited (Tier 2), so
members are fetched once per group and TTL, never per click; membership a decision uses is never
older than the TTL (SPEC 6), and ``forget`` drops it at once (Slack's ``subteam_members_changed``
and ``subteam_updated`` events). A failed lookup (missing scope,
``plan_upgrade_required`` on free plans) is logged and counts as "no members": it refuses
rather than lets anyone through, and is retried on the next click.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

GROUP_CACHE_SECONDS = 30.0
"""How long the members of a group are reused before asking Slack again (SPEC 6: a decision
never uses membership older than 30 s)."""


class UserGroups:
    """``await groups.members("S123")`` → the user ids in that group (cached)."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        ttl_seconds: float = GROUP_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._ttl = ttl_seconds
        self._clock = clock
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}

    async def members(self, group: str) -> frozenset[str]:
        """The members of ``group`` (empty when Slack cannot say)."""
        cached = self._cache.get(group)
        if cached is not None and self._clock() - cached[0] < self._ttl:
            return cached[1]
        try:
            response = await self._client.usergroups_users_list(usergroup=group)
        except SlackApiError as exc:
            logger.warning(
                "cannot list members of user group %s (%s): check the usergroups:read scope",
                group,
                exc.response.get("error"),
            )
            return frozenset()
        users = response.get("users") or []
        members = frozenset(str(u) for u in users)
        self._cache[group] = (self._clock(), members)
        return members

    def forget(self, group: str | None = None) -> None:
        """Ask Slack again next time for ``group`` (None: every group), e.g. on a
        ``subteam_members_changed`` event."""
        if group is None:
            self._cache.clear()
        else:
            self._cache.pop(group, None)
