"""The emulated Web API's agent surfaces: ``assistant.threads.*`` and chat streaming.

The app it plays has Slack's agent messaging experience: suggested prompts set without
``thread_ts`` are pinned at the top of the person's Messages tab; a status line belongs to one
conversation (the person's message that started it).

Answered as Slack documents them: ``invalid_arguments`` for a missing argument or a chunk or
block ``slack_sdk``'s models refuse, ``message_not_found`` / ``message_not_in_streaming_state``
for a stream that is unknown or was stopped. A streamed message is an ordinary message of its
thread: its text is the markdown streamed so far, its blocks the task cards (one per
``task_id``, updated in place).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block, TaskCardBlock
from slack_sdk.models.messages.chunk import BlocksChunk, Chunk, MarkdownTextChunk, TaskUpdateChunk

from bot.local._workspace import BOT_ID, BOT_USER_ID, Message, Workspace, known_channel

Args = dict[str, Any]
_CHUNK_TYPES = ("markdown_text", "blocks", "task_update", "plan_update")


def assistant_methods(workspace: Workspace) -> dict[str, Callable[[Args], Args]]:
    """The methods, answered from ``workspace``."""
    threads = workspace.assistant

    def set_status(args: Args) -> Args:
        thread = threads.find(args.get("channel_id"), args.get("thread_ts"))
        if "status" not in args:
            return _error("invalid_arguments")
        if thread is None:
            return _error("invalid_thread_ts")
        thread.status = str(args["status"] or "")
        workspace.changed()
        return {"ok": True}

    def set_title(args: Args) -> Args:
        thread = threads.find(args.get("channel_id"), args.get("thread_ts"))
        if not args.get("title"):
            return _error("invalid_arguments")
        if thread is None:
            return _error("invalid_thread_ts")
        thread.title = str(args["title"])
        workspace.changed()
        return {"ok": True}

    def set_prompts(args: Args) -> Args:
        """A conversation's prompts (``thread_ts``), or the prompts pinned at the top of the
        person's Messages tab (no ``thread_ts``: the agent view's)."""
        prompts = args.get("prompts")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= 4:
            return _error("invalid_arguments")
        if not all(isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts):
            return _error("invalid_arguments")
        kept = [{"title": str(p["title"]), "message": str(p["message"])} for p in prompts]
        title = str(args.get("title") or "")
        if args.get("thread_ts") is None:
            if not known_channel(args.get("channel_id")):
                return _error("channel_not_found")
            threads.pin_prompts(str(args["channel_id"]), kept, title)
            workspace.changed()
            return {"ok": True}
        thread = threads.find(args.get("channel_id"), args.get("thread_ts"))
        if thread is None:
            return _error("invalid_thread_ts")
        thread.prompts, thread.prompts_title = kept, title
        workspace.changed()
        return {"ok": True}

    def start(args: Args) -> Args:
        channel, thread_ts = args.get("channel"), args.get("thread_ts")
        if not known_channel(channel) or not thread_ts:
            return _error("invalid_arguments")
        if thread_ts not in workspace.messages:
            return _error("thread_not_found")
        chunks = _chunks(args)
        if chunks is None:
            return _error("invalid_arguments")
        message = workspace.add(
            Message(
                ts=workspace.next_ts(),
                user=BOT_USER_ID,
                text="",
                thread_ts=str(thread_ts),
                bot_id=BOT_ID,
                channel=str(channel),
            )
        )
        threads.streaming.add(message.ts)
        _apply(message, chunks)
        workspace.changed()
        return {"ok": True, "channel": channel, "ts": message.ts}

    def stream(stop: bool) -> Callable[[Args], Args]:
        def answer(args: Args) -> Args:
            message = workspace.messages.get(str(args.get("ts")))
            if message is None or message.channel != args.get("channel"):
                return _error("message_not_found")
            if message.ts not in threads.streaming:
                return _error("message_not_in_streaming_state")
            chunks = _chunks(args)
            if chunks is None:
                return _error("invalid_arguments")
            _apply(message, chunks)
            if stop:
                threads.streaming.discard(message.ts)
            workspace.changed()
            return {"ok": True, "channel": message.channel, "ts": message.ts}

        return answer

    return {
        "assistant.threads.setStatus": set_status,
        "assistant.threads.setTitle": set_title,
        "assistant.threads.setSuggestedPrompts": set_prompts,
        "chat.startStream": start,
        "chat.appendStream": stream(stop=False),
        "chat.stopStream": stream(stop=True),
    }


def _chunks(args: Args) -> list[Chunk] | None:
    """The chunks of a streaming call, each valid for slack_sdk's models (None: one is not)."""
    raw = list(args.get("chunks") or [])
    if args.get("markdown_text"):
        raw.insert(0, {"type": "markdown_text", "text": str(args["markdown_text"])})
    chunks = []
    try:
        for item in raw:
            if not isinstance(item, dict) or item.get("type") not in _CHUNK_TYPES:
                return None
            chunk = Chunk.parse(item)
            if chunk is None:
                return None
            chunk.to_dict()
            if isinstance(chunk, BlocksChunk):
                chunk.blocks = [_block(b) for b in chunk.blocks]
            chunks.append(chunk)
    except (SlackObjectFormationError, TypeError, KeyError, AttributeError):
        return None
    return chunks


def _block(raw: Any) -> dict[str, Any]:
    block = Block.parse(raw)
    if block is None:
        raise TypeError(raw)
    return block.to_dict()


def _apply(message: Message, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        if isinstance(chunk, MarkdownTextChunk):
            message.text += chunk.text
            continue
        if isinstance(chunk, TaskUpdateChunk):
            added = [_task_card(chunk)]  # Slack shows a task update as a task card
        elif isinstance(chunk, BlocksChunk):
            added = [b for b in chunk.blocks if isinstance(b, dict)]
        else:
            continue
        for block in added:
            task = block.get("task_id")
            same = [i for i, b in enumerate(message.blocks) if task and b.get("task_id") == task]
            if same:
                message.blocks[same[0]] = block
            else:
                message.blocks.append(block)
    message.edited += 1


def _task_card(update: TaskUpdateChunk) -> dict[str, Any]:
    """The task card of a ``task_update`` chunk (its ``output`` as rich text)."""
    output = None
    if update.output:
        words = [{"type": "text", "text": str(update.output)}]
        output = {
            "type": "rich_text",
            "elements": [{"type": "rich_text_section", "elements": words}],
        }
    card = TaskCardBlock(task_id=update.id, title=update.title, status=update.status, output=output)
    return dict(card.to_dict())


def _error(code: str) -> Args:
    return {"ok": False, "error": code}
