"""The folders of ``bot`` are its parts: each part imports only what it may, the top only wires.

Every import is read with ``ast``: at module level, inside functions and under
``TYPE_CHECKING``. ``bot.api`` and ``bot.slack`` never import each other (the API reports its
decisions through a hook that ``bot._serve`` fills with the Slack implementation).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[2] / "bot"
PARTS = (
    "api",
    "background",
    "coordination",
    "demo",
    "gateway",
    "local",
    "ops",
    "policy",
    "slack",
)
TOP_LEVEL = {
    "__init__.py",
    "__main__.py",
    "_agent_loader.py",
    "_client_results.py",  # what bot.client's decision calls answer
    "_assembly.py",
    "_errors.py",
    "_json_limits.py",  # how deep a JSON body may nest (the Slack edge and the API)
    "_logs.py",
    "_mcp_servers.py",
    "_public.py",  # bot's public names, imported when one is first used
    "_serve.py",
    "_settings.py",
    "_settings_checks.py",  # what each configuration problem says, the one-variable checks
    "client.py",
}
MAY_IMPORT = {
    "api": set(),
    "background": {"slack", "policy", "ops", "coordination"},
    "coordination": set(),
    "demo": set(),
    "gateway": {"api", "policy"},
    "local": {"slack", "demo"},
    "ops": set(),
    "policy": set(),
    "slack": {"policy", "ops", "coordination"},
}
"""The other parts each part may import."""
WIRING_A_PART_MAY_USE = {
    "bot._settings",
    "bot._errors",
    "bot._logs",
    "bot._json_limits",
}
DYNAMIC_IMPORT_ALLOWED = {"_agent_loader.py"}  # loads BOT_AGENT by design


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(BOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (BOT.parent / relative.with_suffix(".py")).exists() or (
        BOT.parent / relative / "__init__.py"
    ).exists()


def _imports(path: Path) -> set[str]:
    """The ``bot`` modules ``path`` imports, anywhere in the file."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if _is_module(submodule) else source)
    return {m for m in found if m == "bot" or m.startswith("bot.")}


def _modules() -> dict[str, set[str]]:
    return {_module_name(path): _imports(path) for path in sorted(BOT.rglob("*.py"))}


def _part(module: str) -> str | None:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 and pieces[1] in PARTS else None


def test_the_top_level_holds_only_the_wiring() -> None:
    modules = {path.name for path in BOT.glob("*.py")}
    assert modules - TOP_LEVEL == set()
    packages = {p.name for p in BOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(PARTS)


@pytest.mark.parametrize("part", PARTS)
def test_each_part_has_a_docstring_saying_its_role(part: str) -> None:
    tree = ast.parse((BOT / part / "__init__.py").read_text())
    docstring = ast.get_docstring(tree)
    assert docstring is not None and len(docstring) > 40, f"bot/{part}/__init__.py"


@pytest.mark.parametrize("part", PARTS)
def test_each_part_imports_only_the_parts_it_may(part: str) -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in _modules().items()
        if _part(module) == part
        for target in sorted(targets)
        if (other := _part(target)) not in (None, part) and other not in MAY_IMPORT[part]
    ]
    assert wrong == []


def test_api_and_slack_never_import_each_other() -> None:
    crossing = [
        f"{module} imports {target}"
        for module, targets in _modules().items()
        for target in sorted(targets)
        if {_part(module), _part(target)} == {"api", "slack"}
    ]
    assert crossing == []


def test_parts_use_nothing_of_the_wiring_but_settings_errors_and_logs() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in _modules().items()
        if _part(module) is not None
        for target in sorted(targets)
        if _part(target) is None and target not in WIRING_A_PART_MAY_USE
    ]
    assert wrong == []


def test_no_module_imports_by_name_at_run_time() -> None:
    offenders = []
    for path in sorted(BOT.rglob("*.py")):
        if path.relative_to(BOT).as_posix() in DYNAMIC_IMPORT_ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                called = (
                    func.attr
                    if isinstance(func, ast.Attribute)
                    else func.id
                    if isinstance(func, ast.Name)
                    else ""
                )
                if called in ("import_module", "__import__", "find_spec"):
                    offenders.append(f"{path.relative_to(BOT)}:{node.lineno} {called}")
    assert offenders == []


def test_no_import_cycle_between_bot_modules() -> None:
    graph = _modules()
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for target in sorted(graph.get(module, ())):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []
