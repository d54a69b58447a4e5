"""The fake Web API's agent surfaces: ``assistant.threads.*`` and chat streaming.

Answers as Slack documents them: ``invalid_arguments`` for a missing or malformed argument
(every chunk and block is parsed with ``slack_sdk``'s models, as the SDK would build them),
``message_not_found`` for an unknown stream, ``message_not_in_streaming_state`` for a stream
that was stopped. A streamed message is a ``PostedMessage`` of the thread like any other: its
text is the markdown streamed so far, its blocks the task cards (one per ``task_id``, updated in
place).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block, TaskCardBlock
from slack_sdk.models.messages.chunk import BlocksChunk, Chunk, MarkdownTextChunk, TaskUpdateChunk

STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
ASSISTANT_METHODS = (
    "assistant.threads.setStatus",
    "assistant.threads.setTitle",
    "assistant.threads.setSuggestedPrompts",
)


@dataclass
class AgentSurfaces:
    """What the assistant methods and streams left in the fake workspace."""

    statuses: list[tuple[str, str, str]] = field(default_factory=list)
    """Every status set: ``(channel_id, thread_ts, status)``, in order ("" clears)."""
    titles: dict[tuple[str, str], str] = field(default_factory=dict)
    """The title of each assistant thread ``(channel_id, thread_ts)``."""
    prompts: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    """The suggested prompts of each assistant thread."""
    streaming: set[str] = field(default_factory=set)
    """The ``ts`` of the messages still streaming."""
    view: Literal["agent", "assistant"] = "assistant"
    """The app's view: Slack's agent messaging experience (``agent_view``) or the legacy
    assistant view (``assistant_view``), as its manifest says."""
    tab_prompts: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    """The suggested prompts at the top of each person's Messages tab (set without
    ``thread_ts``), by channel."""

    def status_of(self, channel: str, thread_ts: str) -> str:
        """The status line of a thread now ("" when none)."""
        shown = [s for c, t, s in self.statuses if (c, t) == (channel, thread_ts)]
        return shown[-1] if shown else ""

    def answer(self, method: str, args: dict[str, Any], fake: Any) -> dict[str, Any]:
        """Slack's answer to ``method`` (one of ``ASSISTANT_METHODS`` / ``STREAM_METHODS``)."""
        if method == "assistant.threads.setStatus":
            if not args.get("channel_id") or not args.get("thread_ts") or "status" not in args:
                return _error("invalid_arguments")
            self.statuses.append((args["channel_id"], args["thread_ts"], str(args["status"])))
            return {"ok": True}
        if method == "assistant.threads.setTitle":
            if not args.get("channel_id") or not args.get("thread_ts") or not args.get("title"):
                return _error("invalid_arguments")
            self.titles[(args["channel_id"], args["thread_ts"])] = str(args["title"])
            return {"ok": True}
        if method == "assistant.threads.setSuggestedPrompts":
            prompts = args.get("prompts")
            if (
                not args.get("channel_id")
                or not isinstance(prompts, list)
                or not 1 <= len(prompts) <= 4
                or not all(
                    isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts
                )
            ):
                return _error("invalid_arguments")
            if args.get("thread_ts") is None:
                self.tab_prompts[str(args["channel_id"])] = prompts
            elif self.view == "assistant":  # an agent app's call with thread_ts silently fails
                self.prompts[(args["channel_id"], str(args["thread_ts"]))] = prompts
            return {"ok": True}
        return self._stream(method, args, fake)

    def _stream(self, method: str, args: dict[str, Any], fake: Any) -> dict[str, Any]:
        from tests.fakes.slack_api import PostedMessage

        channel = str(args.get("channel") or "")
        try:
            chunks = [_parsed(c) for c in args.get("chunks") or []]
            blocks = [Block.parse(b).to_dict() for b in args.get("blocks") or []]  # type: ignore[union-attr]
        except (SlackObjectFormationError, AttributeError, TypeError, KeyError):
            return _error("invalid_arguments")
        if args.get("markdown_text"):
            chunks.insert(0, MarkdownTextChunk(text=str(args["markdown_text"])))
        if method == "chat.startStream":
            thread_ts = args.get("thread_ts")
            if not channel or not thread_ts:
                return _error("invalid_arguments")
            if args.get("task_display_mode") not in (None, "timeline", "plan"):
                return _error("invalid_arguments")
            if not channel.startswith("D") and not (
                args.get("recipient_user_id") and args.get("recipient_team_id")
            ):
                return _error("invalid_arguments")  # a channel stream needs its recipient
            ts = fake.new_ts()
            message = PostedMessage(channel=channel, ts=ts, thread_ts=thread_ts, text="", blocks=[])
            fake.messages[ts] = _with(message, chunks)
            self.streaming.add(ts)
            return {"ok": True, "channel": channel, "ts": ts}
        ts = str(args.get("ts") or "")
        old = fake.messages.get(ts)
        if not channel or old is None:
            return _error("message_not_found")
        if ts not in self.streaming:
            return _error("message_not_in_streaming_state")
        new = _with(old, chunks)
        if method == "chat.stopStream":
            self.streaming.discard(ts)
            new = replace(new, blocks=new.blocks + blocks, metadata=args.get("metadata") or None)
        fake.messages[ts] = replace(new, updates=old.updates + 1)
        return {"ok": True, "channel": channel, "ts": ts}

    def stop_all(self) -> None:
        """Slack ends every open stream (as it does with a stream left unattended)."""
        self.streaming.clear()


def _parsed(raw: Any) -> Chunk:
    if not isinstance(raw, dict) or raw.get("type") not in (
        "markdown_text",
        "blocks",
        "task_update",
        "plan_update",
    ):
        raise TypeError(raw)
    chunk = Chunk.parse(raw)
    assert chunk is not None
    chunk.to_dict()  # runs the model's validators (a task card's status …)
    if isinstance(chunk, BlocksChunk):
        chunk.blocks = [Block.parse(b).to_dict() for b in chunk.blocks]  # type: ignore[union-attr, arg-type]
    return chunk


def _with(message: Any, chunks: list[Chunk]) -> Any:
    text, blocks = message.text, list(message.blocks)
    for chunk in chunks:
        if isinstance(chunk, MarkdownTextChunk):
            text += chunk.text
            continue
        if isinstance(chunk, TaskUpdateChunk):
            added = [task_card(chunk)]  # how Slack shows a task update: a task card
        elif isinstance(chunk, BlocksChunk):
            added = [b for b in chunk.blocks if isinstance(b, dict)]
        else:
            continue
        for block in added:
            task = block.get("task_id")
            same = [i for i, b in enumerate(blocks) if task and b.get("task_id") == task]
            if same:
                blocks[same[0]] = block
            else:
                blocks.append(block)
    return replace(message, text=text, blocks=blocks)


def task_card(update: TaskUpdateChunk) -> dict[str, Any]:
    """The task card Slack shows for a ``task_update`` chunk (one per task id, updated in
    place; its ``output`` as rich text)."""
    output = None
    if update.output:
        section = {
            "type": "rich_text_section",
            "elements": [{"type": "text", "text": update.output}],
        }
        output = {"type": "rich_text", "elements": [section]}
    card = TaskCardBlock(task_id=update.id, title=update.title, status=update.status, output=output)
    return dict(card.to_dict())


def _error(code: str) -> dict[str, Any]:
    return {"ok": False, "error": code}
