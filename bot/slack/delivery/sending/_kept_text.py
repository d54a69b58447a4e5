"""Streamed text is kept until Slack has it (issue 33): what to do when an append failed.

A ``chat.appendStream`` that Slack refused carries text the thread would otherwise never see
(the answer ended without its beginning). The stream keeps every word the model said
(``said``) until Slack confirmed it; after a failed append:

- ``retry``: Slack rate-limited it (429: it was not applied): the same chunks go again, first,
  with the next write (the throttle's timer, or ``finish``);
- ``complete``: anything else (a 5xx, a timeout: it may or may not have been applied): the
  stream is stopped and its message completed in place with ``chat.update`` and everything
  the model said, once; the rest of the answer updates that message;
- ``ended``: Slack no longer streams that message (its time ran out): completed in place too.

What it expects of a stream (``StreamedAnswer`` today, slack_sdk's ``ChatStream`` tomorrow):
its message ``ts`` once started, every word said so far (not only what is still buffered), and
that the failed call's chunks are handed back. ``complete_in_place`` then needs only the Web API
(``chat.stopStream``, ``chat.update``).
"""

from __future__ import annotations

import logging
from typing import Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks._blocks import answer_text

logger = logging.getLogger(__name__)

NOT_STREAMING = frozenset({"message_not_in_streaming_state", "streaming_state_conflict"})
"""``appendStream`` / ``stopStream`` errors of a message Slack no longer streams."""
Repair = Literal["retry", "complete", "ended"]


def after_failed_append(exc: SlackApiError) -> Repair:
    """What to do after ``chat.appendStream`` (or ``stopStream``) failed with ``exc``."""
    if exc.response.get("error") in NOT_STREAMING:
        return "ended"
    if getattr(exc.response, "status_code", 200) == 429:
        return "retry"
    return "complete"


async def complete_in_place(client: AsyncWebClient, *, channel: str, ts: str, said: str) -> None:
    """Stop the stream of ``ts`` (already stopped is fine) and write ``said`` into it whole."""
    try:
        await client.chat_stopStream(channel=channel, ts=ts)
    except SlackApiError as exc:
        logger.info("completing stream %s in place (stop: %s)", ts, exc.response.get("error"))
    if said.strip():
        await client.chat_update(channel=channel, ts=ts, text=answer_text(said))
