"""Start-up and match time of a policy file with thousands of rules (SPEC 11: under 2 s to start,
under 1 ms to match a call).

A file of ``rules`` rules is written the way large policies grow: per-tool rules with literal
names (most of them), ``prefix_*`` and ``?``/``[...]`` globs, agent-path globs and
``args_above`` conditions, so that the calls timed match the first rules, the last ones, rules
behind an ``args_above`` that fails, and no rule at all. ``python -m bot.policy FILE --time``
reads it, compiles it and matches each call, in its own process, as the bot would at start-up
(bench never imports ``bot``: the architecture test forbids it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def policy_text(rules: int) -> str:
    """A policy of ``rules`` rules; the last one catches every ``github_*`` tool."""
    parts = ['[defaults]\napprovers = ["U0ADMIN"]\n']
    for i in range(rules - 1):
        kind = i % 10
        if kind < 6:  # a literal tool, sometimes for one team, sometimes above an amount
            tools = f'["tool_{i}"]'
        elif kind < 8:
            tools = f'["svc{i}_*"]'
        elif kind == 8:
            tools = f'["job{i}-?", "job{i}-[ab]x"]'
        else:
            tools = f'["*_{i}"]'
        line = f"[[rules]]\ntools = {tools}\n"
        if i % 3 == 0:
            line += f'agents = ["ops/team{i % 50}", "ops/team{i % 50}/*"]\n'
        if i % 4 == 0:
            line += f"args_above = {{ amount = {i} }}\n"
        parts.append(line + "approvals = 2\nttl_seconds = 3600\n")
    parts.append('[[rules]]\ntools = ["github_*"]\nrequire_approval = true\n')
    return "\n".join(parts)


def policy_calls(rules: int, calls: int) -> list[dict[str, Any]]:
    """``calls`` calls spread over the file: hits on early and late rules, misses."""
    out: list[dict[str, Any]] = []
    for n in range(calls):
        i = (n * 7919) % max(rules - 1, 1)  # spread over the whole file
        kind = n % 6
        if kind == 0:
            out.append({"tool": f"tool_{i - i % 10}", "agent": f"ops/team{(i - i % 10) % 50}"})
        elif kind == 1:
            out.append({"tool": f"svc{i - i % 10 + 6}_deploy", "args": {"amount": 10**9}})
        elif kind == 2:
            out.append({"tool": f"job{i - i % 10 + 8}-bx", "agent": "ops"})
        elif kind == 3:
            out.append({"tool": "github_create_issue", "id": "github_create_issue"})
        elif kind == 4:
            out.append({"tool": f"unknown_tool_{n}", "agent": "ops/billing"})
        else:
            out.append({"tool": f"list_{i - i % 10 + 9}", "args": {"amount": 1}})
    return out


def run_policy(rules: int = 20_000, calls: int = 2_000) -> dict[str, Any]:
    """The ``policy`` figure: ``start_ms`` (read + compile), its parts, and match times."""
    with tempfile.TemporaryDirectory(prefix="countersign-bench-policy-") as tmp:
        path = Path(tmp) / "countersign.toml"
        path.write_text(policy_text(rules), encoding="utf-8")
        feed = "".join(json.dumps(call) + "\n" for call in policy_calls(rules, calls))
        done = subprocess.run(
            [sys.executable, "-m", "bot.policy", str(path), "--time"],
            input=feed,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"python -m bot.policy exited {done.returncode}: {done.stderr[-500:]}")
    timing: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"figure": "policy", **timing}
