"""``SlackThread``: the Slack thread a run talks in, and who asked."""

from __future__ import annotations

from dataclasses import dataclass

from bot.slack._ids import resource_id, thread_id


@dataclass(frozen=True, kw_only=True)
class SlackThread:
    """A Slack thread the agent talks in, and who is talking."""

    team: str
    channel: str
    thread_ts: str
    requester: str | None
    """The Slack user whose message or click led to this run."""

    @property
    def thread_id(self) -> str:
        """SPEC 6 memory thread id."""
        return thread_id(self.team, self.channel, self.thread_ts)

    @property
    def resource_id(self) -> str:
        """SPEC 6 memory resource id."""
        return resource_id(self.team, self.channel)

    @classmethod
    def of(cls, memory_thread: str, requester: str | None) -> SlackThread | None:
        """The Slack thread of a memory thread id (``slack:<team>:<channel>:<ts>``), or None
        for a thread that is not Slack's."""
        parts = memory_thread.split(":", 3)
        if len(parts) != 4 or parts[0] != "slack":
            return None
        return cls(team=parts[1], channel=parts[2], thread_ts=parts[3], requester=requester)
