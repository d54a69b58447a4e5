"""The lock file is the truth of what gets installed: ``uv.lock`` was made from this
``pyproject.toml`` (run ``make lock`` after editing its dependencies), and the hashed
``requirements/*.txt`` pip installs from (the fallback, and the container) pin the same versions,
``run.txt`` without the test and lint tools."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOCK = tomllib.loads((ROOT / "uv.lock").read_text())
DEV_ONLY = ("pytest", "playwright", "mypy", "ruff", "schemathesis", "hypothesis")


def _ours() -> dict[str, Any]:
    [package] = [p for p in LOCK["package"] if p["name"] == "countersign"]
    return dict(package)


def _pins(text: str) -> dict[str, str]:
    return {
        m.group(1).lower().replace("_", "-"): m.group(2)
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", text, re.M)
    }


def _requirement(spec: str) -> tuple[str, str]:
    name, rest = re.match(r"([A-Za-z0-9_.-]+(?:\[[^\]]*\])?)(.*)", spec).groups()  # type: ignore[union-attr]
    return name.lower().split("[")[0], rest.strip()


def test_the_lock_was_made_from_the_dependencies_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_requirement(d) for d in project["dependencies"]}
    wanted |= {_requirement(d) for d in project["optional-dependencies"]["dev"]}
    locked = {(r["name"], r.get("specifier", "")) for r in _ours()["metadata"]["requires-dist"]}
    assert wanted == locked, "pyproject.toml changed since uv.lock was made: run make lock"


def test_the_dependencies_are_sorted_one_per_line() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for listed in (project["dependencies"], project["optional-dependencies"]["dev"]):
        names = [_requirement(d)[0] for d in listed]
        assert names == sorted(names)


def test_the_requirements_files_pin_what_the_lock_pins() -> None:
    locked = {p["name"]: p["version"] for p in LOCK["package"] if "version" in p}
    run = _pins((ROOT / "requirements" / "run.txt").read_text())
    dev = _pins((ROOT / "requirements" / "dev.txt").read_text())
    for exported in (run, dev):
        assert exported and all(locked.get(n) == v for n, v in exported.items()), (
            "requirements/*.txt are not uv.lock's: run make lock"
        )
    assert "pytest-xdist" in dev and set(run) < set(dev)
    assert [name for name in run if name.startswith(DEV_ONLY)] == []  # make run: no test tools
