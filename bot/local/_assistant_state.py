"""The assistant threads of the local workspace: what Slack keeps about each besides messages.

Each person's direct messages with the app hold their assistant threads; for each the page
shows the title and suggested prompts the bot set, and its status line ("countersign is
thinking…"). Which messages are still streaming is kept here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AssistantThread:
    """One assistant thread: ``thread_ts`` in the direct messages ``channel``."""

    channel: str
    thread_ts: str
    user: str
    title: str = ""
    prompts: list[dict[str, str]] = field(default_factory=list)
    prompts_title: str = ""
    status: str = ""


@dataclass
class AssistantThreads:
    """Every assistant thread, and the messages still streaming."""

    threads: dict[tuple[str, str], AssistantThread] = field(default_factory=dict)
    streaming: set[str] = field(default_factory=set)

    def open(self, channel: str, thread_ts: str, user: str) -> AssistantThread:
        """A person opened a new assistant thread."""
        thread = AssistantThread(channel=channel, thread_ts=thread_ts, user=user)
        self.threads[(channel, thread_ts)] = thread
        return thread

    def find(self, channel: Any, thread_ts: Any) -> AssistantThread | None:
        """The assistant thread, if there is one."""
        return self.threads.get((str(channel), str(thread_ts)))

    def state(self, channel: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """What the page shows of ``channel``'s assistant threads, newest first."""
        threads = sorted(
            (t for t in self.threads.values() if t.channel == channel),
            key=lambda t: float(t.thread_ts),
            reverse=True,
        )
        return {
            "channel": channel,
            "threads": [
                {
                    "thread_ts": t.thread_ts,
                    "title": t.title,
                    "prompts": t.prompts,
                    "prompts_title": t.prompts_title,
                    "status": t.status,
                    "messages": [
                        {**m, "streaming": m["ts"] in self.streaming}
                        for m in messages
                        if m.get("thread_ts") == t.thread_ts and m["ts"] != t.thread_ts
                    ],
                }
                for t in threads
            ],
        }
