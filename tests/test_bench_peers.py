"""``python -m bench peers``: peer JSON lines, ratios, and a missing peer as an error line.

No virtual environment is created here (no pip in the test suite): a fake peer script run by this
interpreter stands in for the real ones.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bench._peers import (
    REQUIREMENTS,
    SCRIPTS,
    PeerSetupError,
    peer_line,
    run_peer_script,
    run_peers,
)

pytestmark = pytest.mark.processes

FAKE_PEER = """
import argparse, json
parser = argparse.ArgumentParser()
for flag in ("--storage", "--path", "--cycles", "--warmup"):
    parser.add_argument(flag)
args = parser.parse_args()
print("some library chatter")
print(json.dumps({"figure": "peer_cycle", "framework": "fake", "version": "9.9",
                  "storage": args.storage, "cycles": int(args.cycles), "median_ms": 50.0,
                  "p99_ms": 70.0, "cycles_per_s": 20.0, "state_bytes": 4000,
                  "floor_median_ms": 0.25, "ratio_to_floor": 200.0}))
"""


@pytest.fixture
def fake_peer(tmp_path: Path) -> Path:
    script = tmp_path / "fake_cycle.py"
    script.write_text(FAKE_PEER)
    return script


def _run(tmp_path: Path, scripts: dict[str, Path], setup: Any = None) -> list[dict[str, Any]]:
    return run_peers(
        cycles=3,
        warmup=1,
        storages=("memory",),
        data_dir=tmp_path / "data",
        scripts=scripts,
        setup=setup or (lambda: sys.executable),
    )


def test_each_peer_gets_one_line_with_its_median_over_ours(tmp_path: Path, fake_peer: Path) -> None:
    ours, theirs = _run(tmp_path, {"fake": fake_peer})
    assert ours["framework"] == "countersign" and ours["memory"]["median_ms"] > 0
    assert theirs["framework"] == "fake" and theirs["version"] == "9.9"
    assert theirs["memory"]["state_bytes"] == 4000
    assert theirs["memory"]["floor_median_ms"] == 0.25
    assert theirs["memory"]["ratio_to_floor"] == 200.0
    assert ours["memory"]["floor_median_ms"] > 0 and ours["memory"]["ratio_to_floor"] > 0
    expected = round(50.0 / ours["memory"]["median_ms"], 2)
    assert theirs["ratio_vs_countersign"] == {"memory": expected}
    assert "error" not in theirs
    json.dumps([ours, theirs])


def test_a_missing_peer_is_an_error_line_and_the_others_still_run(
    tmp_path: Path, fake_peer: Path
) -> None:
    lines = _run(tmp_path, {"ghost": tmp_path / "ghost_cycle.py", "fake": fake_peer})
    ghost, fake = lines[1], lines[2]
    assert "ghost_cycle.py not found" in ghost["error"]
    assert ghost["ratio_vs_countersign"] == {}
    assert fake["ratio_vs_countersign"]["memory"] > 0


def test_an_environment_that_cannot_be_installed_gives_error_lines(
    tmp_path: Path, fake_peer: Path
) -> None:
    def broken() -> Path:
        raise PeerSetupError("pip install failed: no network")

    ours, fake = _run(tmp_path, {"fake": fake_peer}, setup=broken)
    assert ours["memory"]["median_ms"] > 0
    assert "no network" in fake["error"]


def test_a_crashing_or_silent_peer_script_is_reported_not_raised(tmp_path: Path) -> None:
    crashing = tmp_path / "crash.py"
    crashing.write_text(
        "import sys\nprint('boom: no module named langgraph', file=sys.stderr)\nsys.exit(3)\n"
    )
    silent = tmp_path / "silent.py"
    silent.write_text("print('hello')\n")
    crashed = run_peer_script(sys.executable, crashing, [])
    assert "exited with 3" in crashed["error"] and "no module named langgraph" in crashed["error"]
    assert "no JSON figure" in run_peer_script(sys.executable, silent, [])["error"]


def test_ratio_is_their_median_over_ours_per_storage() -> None:
    line = peer_line(
        "peer",
        {"memory": {"median_ms": 30.0, "version": "1"}, "sqlite": {"error": "locked"}},
        {"memory": {"median_ms": 1.5}, "sqlite": {"median_ms": 40.0}},
    )
    assert line["ratio_vs_countersign"] == {"memory": 20.0}
    assert line["error"] == "sqlite: locked"


def test_pydantic_ai_is_a_peer_installed_in_the_peers_environment() -> None:
    assert SCRIPTS["pydantic-ai"].exists()
    assert any(r.startswith("pydantic-ai") for r in REQUIREMENTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_peer_script_measures_its_floor_with_the_shared_code_and_says_why_fair(
    name: str,
) -> None:
    source = SCRIPTS[name].read_text()
    tree = ast.parse(source)
    called = {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    assert {"open_raw_store", "time_cycles"} <= called
    assert "Fair to" in (ast.get_docstring(tree) or "")
