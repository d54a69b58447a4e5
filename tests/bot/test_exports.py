"""The ``bot`` package and its sub-packages export their public names and every exception class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import bot

SUBPACKAGES = ["bot.api", "bot.demo", "bot.gateway", "bot.local", "bot.ops", "bot.slack"]


def _sorted(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (not n.isupper(), n))


def test_all_is_sorted_and_importable() -> None:
    assert bot.__all__ == _sorted(bot.__all__)
    for name in bot.__all__:
        assert hasattr(bot, name), name


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_each_subpackage_all_is_sorted_and_importable(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__ == _sorted(package.__all__)
    for exported in package.__all__:
        assert hasattr(package, exported), f"{name}.{exported}"


def test_every_exception_class_is_exported() -> None:
    missing = []
    for info in pkgutil.walk_packages(bot.__path__, "bot."):
        if info.name == "bot.__main__" or info.name.split(".")[:2] == ["bot", "api"]:
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
