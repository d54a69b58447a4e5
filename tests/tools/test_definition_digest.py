"""``Tool.definition_digest``: what an approver saw of a tool, as one hash (SPEC 2)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

import mcp.types as mcp_types
from pydantic import BaseModel

from tools import Tool, ToolContext, create_tool
from tools.mcp._tools import build_tool


class In(BaseModel):
    id: str


class Wider(BaseModel):
    id: str
    force: bool = False


async def _run(input: BaseModel, ctx: ToolContext) -> dict[str, Any]:
    return {}


def _tool(**changes: Any) -> Tool:
    fields: dict[str, Any] = {
        "id": "delete-record",
        "description": "Delete a record by ID",
        "input_schema": In,
        "execute": _run,
    }
    return create_tool(**{**fields, **changes})


def test_the_digest_is_the_sha256_of_the_canonical_json_of_id_description_and_schema() -> None:
    document = {
        "description": "Delete a record by ID",
        "id": "delete-record",
        "input_schema": In.model_json_schema(),
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert _tool().definition_digest == hashlib.sha256(canonical.encode()).hexdigest()


def test_the_digest_changes_with_the_id_the_description_or_the_input_schema() -> None:
    digests = {
        _tool().definition_digest,
        _tool(id="delete-row").definition_digest,
        _tool(description="Delete a record, for good").definition_digest,
        _tool(input_schema=Wider).definition_digest,
    }
    assert len(digests) == 4


def test_what_an_approver_does_not_see_leaves_the_digest_alone() -> None:
    unseen = _tool(require_approval=True, title="Delete", idempotent=True)
    assert unseen.definition_digest == _tool().definition_digest


def test_the_digest_is_computed_once_per_tool() -> None:
    built: list[str] = []

    class Counted(Tool):
        def definition(self) -> dict[str, Any]:
            built.append(self.id)
            return super().definition()

    tool = Counted(id="t", description="", input_schema=In, execute=_run)
    assert tool.definition_digest == tool.definition_digest == tool.definition_digest
    assert built == ["t"]


def _remote(**changes: Any) -> mcp_types.Tool:
    fields: dict[str, Any] = {
        "name": "delete_ticket",
        "description": "Delete one ticket.",
        "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}},
        "annotations": mcp_types.ToolAnnotations(destructiveHint=True),
    }
    return mcp_types.Tool(**{**fields, **changes})


async def _nope(
    name: str, args: dict[str, Any], *, idempotent: bool = False
) -> mcp_types.CallToolResult:
    raise AssertionError("not called")


def test_an_mcp_tools_digest_covers_its_server_and_its_annotations() -> None:
    tool = build_tool("ops", _remote(), _nope)
    document = {
        "annotations": {"destructiveHint": True},
        "description": "Delete one ticket.",
        "id": "ops_delete_ticket",
        "input_schema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}},
        "server": "ops",
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert tool.definition_digest == hashlib.sha256(canonical.encode()).hexdigest()


def test_an_mcp_server_that_changes_a_tool_changes_its_digest() -> None:
    first = build_tool("ops", _remote(), _nope).definition_digest
    assert build_tool("ops", _remote(), _nope).definition_digest == first
    changed = [
        build_tool("ops", _remote(annotations=mcp_types.ToolAnnotations(readOnlyHint=True)), _nope),
        build_tool("ops", _remote(annotations=None), _nope),
        build_tool("ops", _remote(description="Delete tickets."), _nope),
        build_tool("ops", _remote(inputSchema={"type": "object"}), _nope),
    ]
    assert first not in {tool.definition_digest for tool in changed}
    same_name_other_server = replace(build_tool("ops", _remote(), _nope), server="ops2")
    assert same_name_other_server.definition_digest != first
