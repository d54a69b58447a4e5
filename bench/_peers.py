"""The approval cycle of LangGraph, the OpenAI Agents SDK and Pydantic AI next to ours, as ratios.

The peers run in their own virtual environment, ``.venv-peers`` at the repository root (created
on first use with ``python -m venv`` and ``pip install``): the OpenAI Agents SDK's import name is
``agents``, like ours. (Not inside ``bench/``: the architecture test parses every ``.py`` there.)
Each peer is a standalone script in ``bench/peers/`` run by that environment's python; it prints
one JSON line with the fields of our cycle figure (``median_ms``, ``p99_ms``, ``cycles_per_s``,
``state_bytes``, ``floor_median_ms``, ``ratio_to_floor``). For each storage class (in-memory,
SQLite file) our cycle (``bench._cycle.run_cycles``) runs first, then each peer, one after the
other, with the same number of cycles and warm-up cycles.

Two ratios per framework and storage class:

- ``ratio_to_floor``: its median over the raw-store floor measured in its own process, after each
  of its cycles, by the same code (``bench/peers/_peer_timing.py``, standard library only): what
  the framework costs on top of the storage work a durable approval cannot avoid. Measured in
  the same process and under the same load, it holds up when the processes run at different
  moments on a busy machine.
- ``ratio_vs_countersign``: its median over ours (above 1: slower than countersign).

How each script keeps the comparison fair is in its docstring.

A peer that cannot be installed or run gives a line with ``"error"``; the others still run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._cycle import run_cycles

HERE = Path(__file__).resolve().parent
VENV = HERE.parent / ".venv-peers"
"""The peers' virtual environment (git-ignored)."""
REQUIREMENTS = (
    "langgraph",
    "langgraph-checkpoint-sqlite",
    "langchain",
    "openai-agents",
    "pydantic-ai-slim",
)
"""What ``pip install`` puts in it (``langchain`` brings ``HumanInTheLoopMiddleware``;
``pydantic-ai-slim``: the agent without the model providers' SDKs, none of which is used)."""
SCRIPTS: dict[str, Path] = {
    "langgraph": HERE / "peers" / "langgraph_cycle.py",
    "openai-agents": HERE / "peers" / "openai_agents_cycle.py",
    "pydantic-ai": HERE / "peers" / "pydantic_ai_cycle.py",
}
"""Peer name → its cycle script."""
STORAGES = ("memory", "sqlite")
"""Storage classes compared: ``memory://`` vs in-memory, a SQLite file vs a SQLite file."""
FIGURE_KEYS = (
    "median_ms",
    "floor_median_ms",
    "ratio_to_floor",
    "p99_ms",
    "cycles_per_s",
    "state_bytes",
    "thread_bytes",
)
"""What a peer line keeps of each script's figure, per storage class."""
_MARKER = ".countersign-bench-requirements"


class PeerSetupError(RuntimeError):
    """The peers' virtual environment could not be created or installed."""


def ensure_venv(venv: Path = VENV, requirements: Sequence[str] = REQUIREMENTS) -> Path:
    """The peers' python, creating ``venv`` and installing ``requirements`` when needed."""
    python = venv / "bin" / "python"
    marker = venv / _MARKER
    wanted = "\n".join(requirements)
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    steps = []
    if not python.exists():
        steps.append((f"creating {venv}", [sys.executable, "-m", "venv", str(venv)]))
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    steps.append((f"pip install {' '.join(requirements)}", [*pip, *requirements]))
    for what, step in steps:
        print(f"bench: {what} …", file=sys.stderr, flush=True)
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PeerSetupError(f"{' '.join(step[:3])}: {exc}") from None
        if done.returncode != 0:
            raise PeerSetupError(f"{' '.join(step[:5])} failed: {_tail(done.stderr)}")
    marker.write_text(wanted)
    return python


def run_peer_script(
    python: Path | str, script: Path, args: Sequence[str], *, timeout_s: float = 900
) -> dict[str, Any]:
    """Run one peer script; its last JSON line, or ``{"error": ...}``."""
    if not script.exists():
        return {"error": f"peer script {script.name} not found"}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # keep our `agents` out
    try:
        done = subprocess.run(
            [str(python), str(script), *args],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=script.parent,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"{script.name}: {exc}"}
    if done.returncode != 0:
        return {"error": f"{script.name} exited with {done.returncode}: {_tail(done.stderr)}"}
    for line in reversed(done.stdout.splitlines()):
        try:
            figure = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(figure, dict) and isinstance(figure.get("median_ms"), int | float):
            return figure
    return {"error": f"{script.name} printed no JSON figure: {_tail(done.stdout)}"}


def peer_line(
    name: str, theirs: Mapping[str, Mapping[str, Any]], ours: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """One peer's JSON line: its figures per storage and ``ratio_vs_countersign`` (medians)."""
    line: dict[str, Any] = {"figure": "peers", "framework": name}
    ratios: dict[str, float] = {}
    errors = []
    for storage, figure in theirs.items():
        if "error" in figure:
            errors.append(f"{storage}: {figure['error']}")
            continue
        line.setdefault("version", figure.get("version"))
        line[storage] = {k: figure[k] for k in FIGURE_KEYS if k in figure}
        reference = ours.get(storage, {})
        if reference.get("median_ms"):
            ratios[storage] = round(float(figure["median_ms"]) / reference["median_ms"], 2)
    line["ratio_vs_countersign"] = ratios
    if errors:
        line["error"] = "; ".join(errors)
    return line


def _our_url(storage: str, data_dir: Path) -> str:
    if storage == "memory":
        return "memory://"
    return f"sqlite+aiosqlite:///{data_dir / 'bench-peers-countersign.db'}"


def run_peers(
    *,
    cycles: int = 200,
    warmup: int = 5,
    storages: Sequence[str] = STORAGES,
    data_dir: Path = Path("data"),
    scripts: Mapping[str, Path] = SCRIPTS,
    setup: Callable[[], Path | str] = ensure_venv,
) -> list[dict[str, Any]]:
    """Our line (``framework: countersign``) then one line per peer; never raises for a peer."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("bench-peers-*.db*"):  # every framework starts from an empty file
        old.unlink()
    try:
        python: Path | str | None = setup()
        setup_error = ""
    except PeerSetupError as exc:
        python, setup_error = None, str(exc)
    ours: dict[str, dict[str, Any]] = {}
    theirs: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in scripts}
    for storage in storages:
        url = _our_url(storage, data_dir)
        ours[storage] = asyncio.run(
            run_cycles(url, cycles, warmup, in_flight=0, durable_claims=False)
        )
        for name, script in scripts.items():
            if python is None:
                theirs[name][storage] = {"error": f"peers' environment: {setup_error}"}
                continue
            path = (data_dir / f"bench-peers-{name}.db").resolve()
            args = ["--storage", storage, "--path", str(path)]
            args += ["--cycles", str(cycles), "--warmup", str(warmup)]
            theirs[name][storage] = run_peer_script(python, script, args)
    reference: dict[str, Any] = {"figure": "peers", "framework": "countersign", "cycles": cycles}
    for storage, figure in ours.items():
        figure = {**figure, "state_bytes": figure["snapshot_bytes"]}
        reference[storage] = {k: figure[k] for k in FIGURE_KEYS if k in figure}
    lines = [peer_line(name, theirs[name], ours) for name in scripts]
    return [reference, *({**line, "cycles": cycles} for line in lines)]


def _tail(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else "…" + text[-limit:]
