"""Two OS processes racing on one store: start worker scripts, release them together once both
are ready, and read what each won (its last stdout line, JSON)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest


async def race(worker: Path, url: str, names: tuple[str, ...], *args: str) -> list[Any]:
    """Run ``python worker URL NAME *args`` for each name; each prints ``ready``, waits for a
    line on stdin (all are sent it at once), and ends printing what it won as JSON."""
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(worker),
            url,
            name,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for name in names
    ]
    for process in processes:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
        if line.strip() != b"ready":
            _, stderr = await process.communicate()
            pytest.fail(f"worker did not start: {line!r} {stderr.decode()}")
    for process in processes:  # all are ready: start them together
        assert process.stdin is not None
        process.stdin.write(b"go\n")
        await process.stdin.drain()
    return list(await asyncio.gather(*(_won(process) for process in processes)))


async def _won(process: asyncio.subprocess.Process) -> Any:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return json.loads(stdout.decode().splitlines()[-1])
