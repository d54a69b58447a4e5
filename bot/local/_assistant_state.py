"""The app's Messages tab in the local workspace: what Slack keeps about it besides messages.

The local workspace plays an app with Slack's agent messaging experience (``agent_view``, the
default ``manifest.yml``): each person's direct messages with the app hold their conversations,
each message they write there the root of its own thread. Kept here: the suggested prompts the
bot pinned at the top of each person's tab (set without ``thread_ts``), each conversation's
status line ("countersign is thinking…"), and which messages are still streaming. All of it is
kept in storage with the messages (``bot.local._persist``), so a restart loses none of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AssistantThread:
    """One conversation: ``thread_ts`` (its first message) in the direct messages ``channel``."""

    channel: str
    thread_ts: str
    user: str
    title: str = ""
    prompts: list[dict[str, str]] = field(default_factory=list)
    prompts_title: str = ""
    status: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "thread_ts": self.thread_ts,
            "user": self.user,
            "title": self.title,
            "prompts": self.prompts,
            "prompts_title": self.prompts_title,
            "status": self.status,
        }


@dataclass
class TabPrompts:
    """The suggested prompts pinned at the top of a person's Messages tab."""

    prompts: list[dict[str, str]] = field(default_factory=list)
    title: str = ""


@dataclass
class AssistantThreads:
    """Every conversation, each tab's prompts, and the messages still streaming."""

    threads: dict[tuple[str, str], AssistantThread] = field(default_factory=dict)
    streaming: set[str] = field(default_factory=set)
    tabs: dict[str, TabPrompts] = field(default_factory=dict)
    """The prompts of each person's Messages tab, by channel."""

    def open(self, channel: str, thread_ts: str, user: str) -> AssistantThread:
        """A person started a conversation (their message ``thread_ts`` is its root)."""
        thread = AssistantThread(channel=channel, thread_ts=thread_ts, user=user)
        self.threads[(channel, thread_ts)] = thread
        return thread

    def find(self, channel: Any, thread_ts: Any) -> AssistantThread | None:
        """The conversation, if there is one."""
        return self.threads.get((str(channel), str(thread_ts)))

    def pin_prompts(self, channel: str, prompts: list[dict[str, str]], title: str) -> None:
        """The prompts at the top of ``channel``'s Messages tab."""
        self.tabs[channel] = TabPrompts(prompts=prompts, title=title)

    def state(self, channel: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """What the page shows of ``channel``'s Messages tab: the prompts at its top, then each
        conversation, oldest first, with its first message, its replies and its status line."""
        threads = sorted(
            (t for t in self.threads.values() if t.channel == channel),
            key=lambda t: float(t.thread_ts),
        )
        tab = self.tabs.get(channel, TabPrompts())
        by_ts = {m["ts"]: m for m in messages}
        return {
            "channel": channel,
            "prompts": tab.prompts,
            "prompts_title": tab.title,
            "threads": [
                {
                    "thread_ts": t.thread_ts,
                    "title": t.title,
                    "status": t.status,
                    "root": by_ts.get(t.thread_ts),
                    "messages": [
                        {**m, "streaming": m["ts"] in self.streaming}
                        for m in messages
                        if m.get("thread_ts") == t.thread_ts and m["ts"] != t.thread_ts
                    ],
                }
                for t in threads
            ],
        }

    def to_json(self) -> dict[str, Any]:
        """Everything, as stored with the workspace."""
        return {
            "threads": [t.to_json() for t in self.threads.values()],
            "streaming": sorted(self.streaming),
            "tabs": {c: {"prompts": t.prompts, "title": t.title} for c, t in self.tabs.items()},
        }

    def load(self, stored: dict[str, Any]) -> None:
        """Put back what ``to_json`` stored."""
        for item in stored.get("threads") or []:
            thread = AssistantThread(**item)
            self.threads[(thread.channel, thread.thread_ts)] = thread
        self.streaming.update(stored.get("streaming") or [])
        for channel, tab in (stored.get("tabs") or {}).items():
            self.tabs[channel] = TabPrompts(prompts=tab["prompts"], title=tab["title"])
