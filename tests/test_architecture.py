"""The folders are the architecture: imports point one way, public names are exported."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["storage", "tools", "agents", "bot"]
ALLOWED = {
    "storage": set(),
    "tools": {"storage"},
    "agents": {"tools", "storage"},
    "bot": {"agents", "tools", "storage"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_each_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong: list[str] = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in _imports(path) & set(LAYERS):
            if name != package and name not in ALLOWED[package]:
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []


def test_nothing_imports_bot_from_outside_bot() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("agents", "tools", "storage", "bench")
        if (ROOT / package).exists()
        for path in (ROOT / package).rglob("*.py")
        if "bot" in _imports(path)
    ]
    assert offenders == []


@pytest.mark.parametrize("module", ["storage", "tools", "agents", "agents.models", "agents.errors"])
def test_public_names_and_every_exception_are_exported(module: str) -> None:
    mod = importlib.import_module(module)
    exported = getattr(mod, "__all__", None)
    if module == "agents.errors":
        root = importlib.import_module("agents")
        errors = [
            n for n, v in vars(mod).items() if inspect.isclass(v) and issubclass(v, Exception)
        ]
        assert [n for n in errors if n not in root.__all__] == []
        return
    assert exported is not None and list(exported) == sorted(
        exported, key=lambda n: (not n.isupper(), n)
    )
    for name in exported:
        assert hasattr(mod, name), name
    for name, value in vars(mod).items():
        if inspect.isclass(value) and issubclass(value, Exception) and not name.startswith("_"):
            assert name in exported, f"{module}.{name} is an exception but not exported"


def test_every_error_has_a_stable_code() -> None:
    from agents import errors

    codes = {
        cls.__name__: cls.code
        for cls in vars(errors).values()
        if inspect.isclass(cls) and issubclass(cls, errors.AgentError)
    }
    assert codes["SnapshotNotFound"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
    assert codes["ToolCallNotSuspended"] == "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"
    assert codes["AlreadyDecided"] == "APPROVAL_ALREADY_DECIDED"
    assert codes["FingerprintMismatch"] == "APPROVAL_FINGERPRINT_MISMATCH"
    assert codes["InvalidResumeData"] == "AGENT_RESUME_INVALID_DATA"
    assert codes["ApprovalExpired"] == "APPROVAL_EXPIRED"
    assert len(set(codes.values())) == len(codes)
