"""The ids of what the current task is doing (run, thread, tool call), for log lines.

The run loop and the executor set them in a ``ContextVar``, so every log record written while a
run or a tool is under way can carry them (a host's log formatter reads ``log_context()``).
Each run is its own task, so the ids never leak into another run's lines.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

_IDS: ContextVar[dict[str, str]] = ContextVar("countersign_log_ids", default={})  # noqa: B039


def log_context() -> dict[str, str]:
    """The ids known here: any of ``run_id``, ``thread_id``, ``tool_call_id``, ``agent_id``.

    Example:
        >>> log_context()
        {}
    """
    return dict(_IDS.get())


class LoggingIds:
    """Adds ``ids`` (the ones not None) to ``log_context()`` inside a ``with`` block.

    A class, not a ``@contextmanager`` generator: every stretch of a run and every tool call
    enters one, and the generator's machinery cost as much as the work it wraps.
    """

    __slots__ = ("_ids", "_token")

    def __init__(self, **ids: str | None) -> None:
        self._ids = ids
        self._token: Token[dict[str, str]] | None = None

    def __enter__(self) -> None:
        added = {k: v for k, v in self._ids.items() if v is not None}
        self._token = _IDS.set({**_IDS.get(), **added})

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _IDS.reset(self._token)
            self._token = None
