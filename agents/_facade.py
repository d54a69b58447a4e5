"""``OnRuntime``: the descriptor ``Agent`` uses for attributes kept on its own ``Runtime``."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast, overload

T = TypeVar("T")


class OnRuntime(Generic[T]):
    """An ``Agent`` attribute kept on its ``Runtime``, so running code sees changes at once."""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, agent: None, owner: type[Any]) -> OnRuntime[T]: ...
    @overload
    def __get__(self, agent: Any, owner: type[Any]) -> T: ...
    def __get__(self, agent: Any | None, owner: type[Any]) -> T | OnRuntime[T]:
        if agent is None:
            return self
        return cast(T, getattr(agent._runtime, self._name))

    def __set__(self, agent: Any, value: T) -> None:
        setattr(agent._runtime, self._name, value)
