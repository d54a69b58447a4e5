"""Real MCP servers for the ``tools.mcp`` tests: ``mcp_servers/ops.py`` over stdio and HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

OPS = str(Path(__file__).parent / "mcp_servers" / "ops.py")


def calls(call_log: Path) -> list[str]:
    """The calls ``ops.py`` executed, one line each."""
    return call_log.read_text().splitlines() if call_log.exists() else []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HttpServer:
    """``ops.py`` served over streamable HTTP on 127.0.0.1; can be stopped and started again."""

    def __init__(self, call_log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.call_log = call_log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {"OPS_CALL_LOG": str(self.call_log), "PATH": "/usr/bin:/bin"}
        self.process = subprocess.Popen(
            [sys.executable, OPS, "http", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()  # never leave it running past the test
        raise RuntimeError("the HTTP MCP server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture
def call_log(tmp_path: Path) -> Path:
    """The file ``ops.py`` appends one line to per executed call."""
    return tmp_path / "calls.log"


@pytest.fixture
def http_server(call_log: Path) -> Iterator[HttpServer]:
    server = HttpServer(call_log)
    server.start()
    yield server
    server.stop()
