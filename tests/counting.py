"""``CountingStorage``: any ``Storage``, with a count of the calls made on it, per method.

The count is taken at the protocol boundary (what the runtime and the bot ask of storage), so
a test can say "one read" whatever the backend does inside that read.

Example:
    >>> counted = CountingStorage(store)
    >>> agent = Agent(id="ops", model=model, storage=counted)
    >>> counted.reset(); await agent.pending_call(run_id=rid, tool_call_id="c1")
    >>> counted.calls == {"load_run_and_escalations": 1}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from storage import Storage


class CountingStorage:
    """Delegates every attribute to ``inner``; counts the calls of its methods."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, dict[str, Any]]] = []
        """Every call: the method's name and its keyword arguments."""

    def reset(self) -> None:
        """Forget the calls counted so far."""
        self.calls.clear()
        self.log.clear()

    def made(self, name: str, **kwargs: Any) -> int:
        """How many calls of ``name`` had these keyword arguments (among others)."""
        return sum(
            1
            for called, given in self.log
            if called == name and all(given.get(k) == v for k, v in kwargs.items())
        )

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute
        return self._counted(name, attribute)

    def _counted(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            self.log.append((name, dict(kwargs)))
            return method(*args, **kwargs)

        return counted
