"""Links to Slack messages without asking Slack for each: the workspace's URL is read once
(``auth.test``, no scope needed) and kept, and a message's link is built from it, its channel
and ts, as Slack's own permalinks read:
``https://acme.slack.com/archives/C123/p1700000000000100?thread_ts=1700000000.000100&cid=C123``.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

FALLBACK_URL = "https://slack.com/"
"""Where links point when the workspace's URL is unknown (Slack redirects to the workspace)."""


class TeamURLs:
    """Each workspace's URL (``https://acme.slack.com/``), read once per team and kept."""

    def __init__(self) -> None:
        self._urls: dict[str, str] = {}

    async def url(self, client: AsyncWebClient, team: str) -> str:
        """The URL of ``team``; one ``auth.test`` the first time (none after it answered).

        A bot is installed in one workspace: ``auth.test`` names it. Another team (a shared
        channel's), or no answer from Slack, gets ``FALLBACK_URL`` (asked again next time)."""
        known = self._urls.get(team)
        if known is not None:
            return known
        try:
            answer = await client.auth_test()
        except SlackApiError as exc:
            logger.info("no workspace URL (auth.test): %s", exc.response.get("error"))
            return FALLBACK_URL
        url, home = answer.get("url"), answer.get("team_id")
        if isinstance(url, str) and isinstance(home, str) and _usable(url):
            self._urls[home] = url if url.endswith("/") else url + "/"
        return self._urls.get(team, FALLBACK_URL)


def message_link(base: str, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
    """The link to message ``ts`` of ``channel`` under workspace URL ``base`` (in its thread
    when ``thread_ts`` is given); None when the ids would not make a safe link."""
    if not (channel.isalnum() and _is_ts(ts) and (thread_ts is None or _is_ts(thread_ts))):
        return None
    link = f"{base}archives/{channel}/p{ts.replace('.', '')}"
    if thread_ts is not None:
        link += f"?thread_ts={thread_ts}&cid={channel}"
    return link


def _is_ts(ts: str) -> bool:
    return ts.replace(".", "", 1).isdigit()


def _usable(url: str) -> bool:
    """An http(s) URL with nothing in it that would end a mrkdwn link early."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and not any(c in url for c in "<>| \n")
