"""The ids of what the current task is doing (run, thread, tool call), for log lines.

The run loop and the executor set them in a ``ContextVar``, so every log record written while a
run or a tool is under way can carry them (a host's log formatter reads ``log_context()``).
Each run is its own task, so the ids never leak into another run's lines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_IDS: ContextVar[dict[str, str]] = ContextVar("countersign_log_ids", default={})  # noqa: B039


def log_context() -> dict[str, str]:
    """The ids known here: any of ``run_id``, ``thread_id``, ``tool_call_id``, ``agent_id``.

    Example:
        >>> log_context()
        {}
    """
    return dict(_IDS.get())


@contextlib.contextmanager
def logging_ids(**ids: str | None) -> Iterator[None]:
    """Add ``ids`` (the ones not None) to ``log_context()`` inside the block."""
    token = _IDS.set({**_IDS.get(), **{k: v for k, v in ids.items() if v is not None}})
    try:
        yield
    finally:
        _IDS.reset(token)
