"""The gateway's tools (SPEC 17): a coding agent's call is held unless a matching rule says
``require_approval = false`` (or no rule matches and ``[gateway] unmatched = "allow"``); an MCP
server's result reaches the client whole, or cut at ``TOOL_OUTPUT_MAX_BYTES`` with a note."""

from __future__ import annotations

import mcp.types as mcp_types

from bot.gateway import HookGate
from bot.gateway._tools import cap_result
from bot.policy import GatewayPolicy, PolicyFile, Rule


def test_a_hook_call_is_held_unless_a_rule_explicitly_lets_it_through() -> None:
    rules = (
        Rule(tools=("Bash",), args_match={"command": "^ls\\b"}, require_approval=False),
        Rule(tools=("Bash",), args_match={"command": "^git push"}, approvals=2),
        Rule(tools=("Read",)),  # matches, says nothing of approval: held
    )
    gate = HookGate(PolicyFile(rules=rules))
    assert not gate.holds("Bash", {"command": "ls -la"})
    assert gate.holds("Bash", {"command": "git push"})
    assert gate.holds("Read", {"file_path": "/a"})
    assert gate.holds("Bash", {"command": "rm x"})  # no rule: held ([gateway] unmatched)
    allow = HookGate(PolicyFile(rules=rules, gateway=GatewayPolicy(unmatched="allow")))
    assert not allow.holds("Bash", {"command": "rm x"})
    assert allow.holds("Read", {"file_path": "/a"})  # a matching rule still holds it


def test_a_result_is_returned_whole_or_cut_with_a_note() -> None:
    small = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="ok")], structured_content={"a": 1}
    )
    assert cap_result(small, 1000) == {
        "content": [{"type": "text", "text": "ok"}],
        "structuredContent": {"a": 1},
        "isError": False,
        "resultType": "complete",
    }
    big = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(type="text", text="x" * 5000),
            mcp_types.ImageContent(type="image", data="aGk=" * 100, mime_type="image/png"),
        ]
    )
    cut = cap_result(big, 1000)
    [block] = cut["content"]
    assert block["text"].startswith("x" * 1000)
    assert (
        "the result was cut here" in block["text"]
        and "TOOL_OUTPUT_MAX_BYTES=1,000" in block["text"]
    )
    assert cut["isError"] is False
