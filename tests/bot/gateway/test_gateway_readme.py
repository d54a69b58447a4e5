"""The gateway's page (``docs/gateway.md``) says what works: its client configurations are valid
JSON pointing at ``/mcp`` and the hook command, its policy example is a valid policy whose rules
do what the page says, and the one command for the local workspace, on the page and in the
README, uses a token the local workspace accepts (``test_local_gateway`` runs that path)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.gateway import HookGate
from bot.local._serve import LOCAL_TOKENS
from bot.policy import PolicyFile, policy_problems

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "gateway.md"


def _section() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_client_configurations_are_valid_and_point_at_the_gateway() -> None:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", _section(), re.S)]
    servers = [b["mcpServers"]["countersign"] for b in blocks if "mcpServers" in b]
    assert len(servers) == 3
    claude, cursor, relay = servers
    assert claude["type"] == "http" and claude["url"].endswith("/mcp")
    assert claude["headers"]["Authorization"].startswith("Bearer ")
    assert cursor["url"].endswith("/mcp") and cursor["headers"]["Authorization"].startswith(
        "Bearer"
    )
    assert relay["command"] == "countersign" and relay["args"] == ["gateway", "--stdio"]
    assert set(relay["env"]) == {"COUNTERSIGN_URL", "COUNTERSIGN_TOKEN"}
    [settings] = [b for b in blocks if "hooks" in b]
    [entry] = settings["hooks"]["PreToolUse"]
    assert entry["matcher"] == "Bash|Write|Edit|mcp__.*"
    assert entry["hooks"] == [
        {"type": "command", "command": "countersign hook claude-code", "timeout": 600}
    ]


def test_the_policy_example_is_valid_and_holds_what_it_says(tmp_path: Path) -> None:
    [toml] = re.findall(r"```toml\n(.*?)```", _section(), re.S)
    path = tmp_path / "countersign.toml"
    path.write_text(toml, encoding="utf-8")
    policy = policy_problems(path)
    assert isinstance(policy, PolicyFile), policy
    gate = HookGate(policy)
    assert not gate.holds("Bash", {"command": "git status"})
    assert gate.holds("Bash", {"command": "git push origin main"})
    assert gate.holds("Bash", {"command": "rm -rf build"})  # unmatched = "hold"


@pytest.mark.parametrize("page", [PAGE, ROOT / "README.md"], ids=lambda p: p.name)
def test_the_one_command_uses_the_local_workspace_and_a_token_it_accepts(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    [command] = re.findall(r"```sh\n(claude mcp add .*?)\n```", text, re.S)
    assert "--transport http countersign http://127.0.0.1:3000/mcp" in command
    token = re.search(r"Bearer (\S+?)\"", command)
    assert token is not None and token.group(1) in LOCAL_TOKENS
