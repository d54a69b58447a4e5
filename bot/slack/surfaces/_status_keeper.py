"""``StatusKeeper``: a status line kept standing while its run waits for a person.

Slack clears an assistant thread's status about two minutes after it was set when no message
follows; a call waiting for approval (or a question waiting for its answer) may wait for hours.
While a run waits, its thread's "is waiting for …" status is set again every ``every`` seconds
(90: before Slack's clear), for as long as one of the calls it names is still pending; any other
status of the thread (the decision's "is running …", the answer clearing it) ends that.

``refresh_statuses(services, now=...)`` (``bot.slack.surfaces._status``) is one pass (tests call
it with an injected clock); the bot's ``Background`` runs it every ``TICK_SECONDS``. What is kept
lives in this process: a wait this instance did not show is refreshed by the instance that
showed it, and a decision taken on another instance ends the refresh here at the next pass (the
call is no longer pending).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.slack.delivery._thread import SlackThread

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 90.0
"""How long a waiting status stands before it is set again (Slack clears it at about 120 s)."""
TICK_SECONDS = 15.0
"""How often the bot looks for a status to set again."""


@dataclass(frozen=True, kw_only=True)
class KeptStatus:
    """A waiting status line and the calls it waits for."""

    thread: SlackThread
    """The assistant thread."""
    status: str
    """The status shown ("is waiting for @sam to approve delete-record…")."""
    run_id: str
    """The run that waits."""
    calls: frozenset[str]
    """The tool call ids it waits for: kept while any of them is pending."""
    shown_at: float
    """When it was last set (the keeper's clock)."""


class StatusKeeper:
    """The waiting statuses of this process's assistant threads, set again before Slack clears
    them."""

    def __init__(
        self, *, every: float = REFRESH_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.every = every
        """Seconds a status stands before it is set again."""
        self._clock = clock
        self._kept: dict[str, KeptStatus] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, thread: SlackThread, status: str, *, run_id: str, calls: frozenset[str]) -> None:
        """``status`` was just set in ``thread`` while ``calls`` of ``run_id`` wait."""
        self._kept[thread.thread_id] = KeptStatus(
            thread=thread, status=status, run_id=run_id, calls=calls, shown_at=self._clock()
        )

    def forget(self, thread_id: str) -> None:
        """Another status was set in the thread (or it was cleared): nothing to keep there."""
        self._kept.pop(thread_id, None)

    def kept(self, thread_id: str) -> KeptStatus | None:
        """What is kept for ``thread_id``."""
        return self._kept.get(thread_id)

    def due(self, now: float | None = None) -> list[KeptStatus]:
        """The statuses set ``every`` seconds ago or longer."""
        at = self._clock() if now is None else now
        return [k for k in self._kept.values() if at - k.shown_at >= self.every]

    def shown(self, kept: KeptStatus, now: float | None = None) -> None:
        """``kept`` was set again (unless the thread moved on meanwhile)."""
        if self._kept.get(kept.thread.thread_id) == kept:
            at = self._clock() if now is None else now
            self._kept[kept.thread.thread_id] = KeptStatus(
                thread=kept.thread,
                status=kept.status,
                run_id=kept.run_id,
                calls=kept.calls,
                shown_at=at,
            )
