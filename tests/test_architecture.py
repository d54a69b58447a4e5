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


BENCH_OF_THE_BOT_IN_PROCESS = {"bench/_sweep.py"}
"""The bench figures that time a part of the bot in this process (the sweep's pass over a
store); every other figure starts the bot as a process, as it runs."""


def test_nothing_imports_bot_from_outside_bot() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("agents", "tools", "storage", "bench")
        if (ROOT / package).exists()
        for path in (ROOT / package).rglob("*.py")
        if "bot" in _imports(path)
    ]
    assert sorted(set(offenders) - BENCH_OF_THE_BOT_IN_PROCESS) == []


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


CYCLE_ROOTS = ["storage", "tools", "agents", "bot", "bench"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _all_imports(path: Path, module: str, known: set[str]) -> set[str]:
    """Every module ``path`` imports (module level, in functions, under TYPE_CHECKING)."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return {name for name in found if name in known and name != module}


def _import_graph() -> dict[str, set[str]]:
    paths = {
        _module_name(p): p
        for root in CYCLE_ROOTS
        if (ROOT / root).exists()
        for p in (ROOT / root).rglob("*.py")
    }
    known = set(paths)
    return {module: _all_imports(path, module, known) for module, path in paths.items()}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_the_import_graph_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _find_cycle(graph) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_itself_through_others() -> None:
    """Every import counts (in functions, under TYPE_CHECKING, of a package's __init__)."""
    cycle = _find_cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_runtime_uses_only_the_opentelemetry_api_and_no_metrics_library() -> None:
    """The host configures the SDK and serves metrics; ``agents`` only reports (SPEC 13)."""
    offenders = []
    for path in sorted((ROOT / "agents").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{path.relative_to(ROOT)} imports {n}"
                for n in names
                if n.startswith(("opentelemetry.sdk", "opentelemetry.exporter", "prometheus"))
            ]
    assert offenders == []


MAX_MODULES_PER_FOLDER = 14
"""bolt-python's largest folder: past it, the names inside are folders in disguise."""
MAX_MODULE_LINES = 400


def _package_folders() -> list[Path]:
    return sorted(
        folder
        for layer in LAYERS
        for folder in [ROOT / layer, *(ROOT / layer).rglob("*")]
        if folder.is_dir() and (folder / "__init__.py").exists()
    )


def test_no_folder_of_package_code_holds_more_than_14_modules() -> None:
    crowded = {
        str(folder.relative_to(ROOT)): count
        for folder in _package_folders()
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}


def test_every_sub_package_has_a_docstring_saying_its_role() -> None:
    silent = [
        str(folder.relative_to(ROOT))
        for folder in _package_folders()
        if folder.name != "versions"
        and len(ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or "") < 40
    ]
    assert silent == []


def test_no_module_of_package_code_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for layer in LAYERS
        for path in (ROOT / layer).rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
