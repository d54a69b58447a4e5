"""The runtime writes its own words only: no Slack or other edge vocabulary in ``agents``, and
every audit kind anyone writes is one of storage's closed ``AuditKind`` set."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from storage import AuditKind, EdgeAuditKind, RuntimeAuditKind

AGENTS = Path(__file__).resolve().parents[2] / "agents"
EDGE_WORDS = {"provide", "presented", "slack", "button", "modal", "thread_ts", "channel", "team"}
"""Words of the Slack edge (its buttons, its kinds, its places) that the runtime never writes."""


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_runtime_writes_no_edge_word() -> None:
    found = [
        f"{path.relative_to(AGENTS.parent)}:{line} {text!r}"
        for path in sorted(AGENTS.rglob("*.py"))
        for line, text in _strings(path)
        if text.lower() in EDGE_WORDS
    ]
    assert found == []


def test_the_audit_kinds_are_the_runtimes_and_the_edges_by_name() -> None:
    kinds = set(get_args(AuditKind))
    assert kinds == set(get_args(RuntimeAuditKind)) | set(get_args(EdgeAuditKind))
    assert {"presented", "refused", "expired"} <= set(get_args(EdgeAuditKind))
    assert "presented" not in get_args(RuntimeAuditKind)  # where a card is: the edge's fact
