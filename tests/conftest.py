"""Suite-wide guards and shared fixtures.

Every test runs behind a socket guard: a connection to anything but loopback fails the test,
so no test can reach a real Slack, OpenAI or database server by accident.

And behind a process guard: a test that starts an OS process (``python -m bot``, a worker, a
server, Chromium) must say so with the ``processes`` (or ``browser``, ``chaos``) marker, so
``make test-fast`` can leave exactly those out (``pytest -m "not processes and ..."``).
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkAccessBlocked(RuntimeError):
    """A test tried to reach a non-loopback address."""


def _is_loopback(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_address(address: Any) -> None:
    if isinstance(address, tuple) and address and not _is_loopback(address[0]):
        raise NetworkAccessBlocked(
            f"test tried to connect to {address[0]!r}: tests may only use loopback "
            "(use the fakes in tests/fakes)"
        )


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check_address(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check_address(address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if not _is_loopback(name):
        raise NetworkAccessBlocked(
            f"test tried to resolve {name!r}: tests may only use loopback (use the fakes)"
        )
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    yield


PROCESS_MARKERS = ("processes", "browser", "chaos")
"""A test with one of these may start OS processes; any other fails when it starts one."""

_current: list[pytest.Item] = []
_real_popen_init = subprocess.Popen.__init__


class UnmarkedProcess(RuntimeError):
    """A test started an OS process without a marker that says it does."""


def _guarded_popen_init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
    item = _current[-1] if _current else None
    if item is not None and not any(item.get_closest_marker(m) for m in PROCESS_MARKERS):
        raise UnmarkedProcess(
            f"{item.nodeid} starts a process: mark it @pytest.mark.processes (make test-fast "
            "runs only tests that start none)"
        )
    _real_popen_init(self, *args, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    subprocess.Popen.__init__ = _guarded_popen_init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _current.append(item)
    try:
        return (yield)
    finally:
        _current.pop()
