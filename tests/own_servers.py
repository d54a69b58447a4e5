"""Servers a test starts for itself on free loopback ports, to take down and bring back.

Never the shared services: an outage test stops only what it started, by its pid.

- ``OwnRedis``: a ``redis-server`` with an append-only file (a restart keeps its data).
- ``OwnPostgres``: a PostgreSQL cluster made with ``initdb`` in a temporary folder (trust
  auth, run as the ``postgres`` user when the tests run as root, as on CI), stopped with a fast
  shutdown (SIGINT to the postmaster) and started again on the same port and data.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from tests.bot.bot_process import free_port


async def _answers(port: int, seconds: float = 30) -> None:
    async with asyncio.timeout(seconds):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return


class OwnRedis:
    """A redis-server of this test only; ``stop`` and ``start`` it like an outage."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: ASYNC220 (returns at once)
            [
                "redis-server",
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--dir", str(self.directory),
                "--appendonly", "yes",
                "--appendfsync", "always",
                "--save", "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        await _answers(self.port)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``postgres`` (Debian keeps them out of PATH)."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None


class OwnPostgres:
    """A PostgreSQL cluster of this test only, in a folder of its own under the system's
    temporary directory (the ``postgres`` user must reach it, which a pytest ``tmp_path`` under
    root's private folder does not allow); ``stop``/``start`` it, ``remove`` it at the end."""

    def __init__(self) -> None:
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("PostgreSQL's initdb is not installed")
        self.bin = binaries
        self.directory = Path(tempfile.mkdtemp(prefix="countersign-pg-"))
        self.data = self.directory / "pgdata"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._user = "postgres" if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _as_owner(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", self._user, "--", *argv] if self._user else argv

    def init(self) -> None:
        if self._user:
            entry = pwd.getpwnam(self._user)
            os.chown(self.directory, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            self._as_owner(
                [str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    async def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: ASYNC220 (returns at once)
            self._as_owner(
                [
                    str(self.bin / "postgres"),
                    "-D", str(self.data),
                    "-p", str(self.port),
                    "-c", "listen_addresses=127.0.0.1",
                    "-c", f"unix_socket_directories={self.directory}",
                    "-c", "fsync=off",
                    "-c", "max_connections=200",
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        await _answers(self.port)
        await self._accepting()

    async def _accepting(self) -> None:
        """Until the server accepts queries (the port opens a little before)."""
        import asyncpg

        async with asyncio.timeout(30):
            while True:
                try:
                    conn = await asyncpg.connect(
                        host="127.0.0.1", port=self.port, user="postgres", database="postgres"
                    )
                except (OSError, asyncpg.PostgresError):
                    await asyncio.sleep(0.1)
                    continue
                await conn.close()
                return

    def stop(self) -> None:
        """Fast shutdown: every session is ended at once (clients see the server go away)."""
        pid_file = self.data / "postmaster.pid"
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGINT)
        if self.process is not None:
            self.process.wait(timeout=60)
            self.process = None

    def remove(self) -> None:
        """Stop it and delete its folder."""
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
