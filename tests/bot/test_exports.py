"""The ``bot`` package exports its public names and every exception class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import bot


def test_all_is_sorted_and_importable() -> None:
    assert bot.__all__ == sorted(bot.__all__, key=lambda n: (not n.isupper(), n))
    for name in bot.__all__:
        assert hasattr(bot, name), name


def test_every_exception_class_is_exported() -> None:
    missing = []
    for info in pkgutil.iter_modules(bot.__path__, "bot."):
        if info.name in ("bot.__main__",) or info.name.startswith("bot._api"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, Exception)
                and obj.__module__ == module.__name__
                and name not in bot.__all__
            ):
                missing.append(f"{info.name}.{name}")
    assert missing == []
