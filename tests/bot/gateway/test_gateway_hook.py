"""SPEC 17's coding-agent hook: ``python -m bot hook claude-code`` (a real subprocess) fed Claude
Code's documented ``PreToolUse`` JSON for ``Bash``, ``Write`` and an ``mcp__server__tool`` call,
answering through ``POST /api/gate``: allow (a rule lets it through), deny with who and why,
waiting then approved on the second run (used once), and the bot down (deny, exit 0)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.bot_process import free_port
from tests.bot.gateway.harness import (
    ALICE,
    SERVICE,
    Gateway,
    gateway_bot,
    gateway_env,
)
from tests.fakes.slack_api import FakeSlackAPI

pytestmark = [pytest.mark.slow, pytest.mark.processes]

RULES = """
[[rules]]                      # reading is fine
tools = ["Bash"]
args_match = { command = "^(ls|cat|git status)\\\\b" }
require_approval = false

[[rules]]                      # pushing needs two people
tools = ["Bash"]
args_match = { command = "^git push\\\\b" }
approvals = 2
"""


def claude_code(tool: str, tool_input: dict[str, Any], session: str = "sess-1") -> str:
    """What Claude Code writes on a ``PreToolUse`` hook's stdin (its hooks reference)."""
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/home/dev/.claude/projects/app/00893aaf.jsonl",
            "cwd": "/home/dev/app",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_01{abs(hash((tool, session))) % 10**8:08d}",
        }
    )


BASH_LS = ("Bash", {"command": "ls -la", "description": "List files", "timeout": 120000})
BASH_RM = ("Bash", {"command": "rm -rf build", "description": "Clean the build"})
WRITE = ("Write", {"file_path": "/home/dev/app/notes.txt", "content": "hello"})
MCP_ISSUE = ("mcp__github__create_issue", {"repo": "acme/app", "title": "Broken build"})


async def hook(
    url: str, stdin: str, *, wait: float, token: str | None = ALICE
) -> tuple[int, dict[str, Any]]:
    """``python -m bot hook claude-code --wait WAIT``: its exit status and its answer."""
    env = {**os.environ, "COUNTERSIGN_URL": url}
    env.pop("COUNTERSIGN_TOKEN", None)
    if token is not None:
        env["COUNTERSIGN_TOKEN"] = token
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "hook",
        "claude-code",
        "--wait",
        str(wait),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await process.communicate(stdin.encode())
    assert process.returncode is not None
    lines = out.decode().strip().splitlines()
    assert len(lines) == 1, (out, err)
    answer: dict[str, Any] = json.loads(lines[0])["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    return process.returncode, answer


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


@pytest.fixture
async def gateway(slack: FakeSlackAPI, tmp_path: Path) -> AsyncIterator[Gateway]:
    async with gateway_bot(slack, gateway_env(slack, tmp_path, RULES)) as running:
        yield running


async def test_a_call_a_rule_lets_through_is_allowed_at_once(gateway: Gateway) -> None:
    status, answer = await hook(gateway.url, claude_code(*BASH_LS), wait=5)
    assert status == 0 and answer["permissionDecision"] == "allow"
    assert gateway.cards() == []


async def test_declined_is_a_deny_saying_who_and_why(gateway: Gateway) -> None:
    running = asyncio.create_task(hook(gateway.url, claude_code(*WRITE), wait=120))
    card = await gateway.next_card()
    shown = str(card.blocks)
    assert "Write" in shown and "notes.txt" in shown and "<@U0ALICE>" in shown
    assert "from claude-code through the countersign hook" in shown and "sess-1" in shown
    await gateway.decline(card, user="U0BOB", reason="not in this repo")
    status, answer = await running
    assert status == 0 and answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"] == (
        "countersign: Declined by U0BOB because: not in this repo: the call was not run."
    )


async def test_waiting_then_approved_on_the_second_run_and_used_once(gateway: Gateway) -> None:
    stdin = claude_code(*MCP_ISSUE)
    status, first = await hook(gateway.url, stdin, wait=1)
    assert status == 0 and first["permissionDecision"] == "deny"
    card = await gateway.next_card()
    reason = first["permissionDecisionReason"]
    assert reason.startswith("countersign: waiting for approval in Slack: http")
    assert f"p{card.ts.replace('.', '')}" in reason and "run it again" in reason
    _, again = await hook(gateway.url, stdin, wait=0)  # the identical call: the same card
    assert again["permissionDecision"] == "deny" and len(gateway.cards()) == 1
    await gateway.click(card, "approval:approve", user="U0BOB")
    _, second = await hook(gateway.url, stdin, wait=1)
    assert second["permissionDecision"] == "allow"
    assert second["permissionDecisionReason"] == "countersign: approved by U0BOB"
    _, third = await hook(gateway.url, stdin, wait=0)  # an approval is used once
    assert third["permissionDecision"] == "deny" and len(gateway.cards()) == 2


async def test_a_call_no_rule_matches_is_held_and_other_sessions_ask_anew(
    gateway: Gateway,
) -> None:
    _, first = await hook(gateway.url, claude_code(*BASH_RM), wait=0)
    _, other = await hook(gateway.url, claude_code(*BASH_RM, session="sess-2"), wait=0)
    assert first["permissionDecision"] == other["permissionDecision"] == "deny"
    assert len(gateway.cards()) == 2  # same person, tool and arguments; another session


async def test_the_bot_down_is_a_deny_and_exit_0() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    status, answer = await hook(url, claude_code(*BASH_LS), wait=5)
    assert status == 0 and answer["permissionDecision"] == "deny"
    assert "could not be reached" in answer["permissionDecisionReason"]
    assert "fail-closed" in answer["permissionDecisionReason"]


async def test_a_refused_token_and_unreadable_input_are_denies_too(gateway: Gateway) -> None:
    _, wrong = await hook(gateway.url, claude_code(*BASH_LS), wait=0, token="wrong")
    assert wrong["permissionDecision"] == "deny" and "HTTP 401" in wrong["permissionDecisionReason"]
    _, service = await hook(gateway.url, claude_code(*BASH_LS), wait=0, token=SERVICE)
    assert (
        service["permissionDecision"] == "deny"
        and "HTTP 403" in service["permissionDecisionReason"]
    )
    status, garbled = await hook(gateway.url, "not json", wait=0)
    assert status == 0 and garbled["permissionDecision"] == "deny"
    _, missing = await hook(gateway.url, claude_code(*BASH_LS), wait=0, token=None)
    assert missing["permissionDecision"] == "deny"
    assert "COUNTERSIGN_TOKEN" in missing["permissionDecisionReason"]
