"""``python -m bot.policy [FILE] [--time]``: check an approval policy file without starting the bot.

Prints ``FILE: N rules, M MCP servers`` and exits 0, or every problem on its own line (as at
start-up, escalation steps checked against ``APPROVAL_TTL_SECONDS`` where the file sets no TTL)
and exits 2. FILE defaults to ``POLICY_FILE``, else ``./countersign.toml``.

With ``--time`` it also reads calls from stdin, one JSON object a line (``{"tool": "refund",
"id": "refund", "agent": "ops/billing", "args": {"amount": 5000}}``; ``id`` defaults to
``tool``, ``agent`` to the root, ``args`` to none), matches each one and prints one JSON line:
``rules``, ``read_ms`` (TOML and validation), ``compile_ms`` (``CallPolicy``), ``start_ms``
(both), ``calls``, ``matched`` (calls some rule matched), ``match_median_us``,
``match_p99_us`` and ``match_max_us``. ``python -m bench policy`` runs it on a generated file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from bot.policy._apply import CallPolicy, Fallback
from bot.policy._file import PolicyFile, policy_path, policy_problems
from bot.policy._values import TTL_DEFAULT_SECONDS, TTL_MAX_SECONDS, TTL_MIN_SECONDS


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None) -> int:
    """Check (and with ``--time``, time) a policy file; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bot.policy", description=__doc__)
    parser.add_argument("file", nargs="?", help="the policy file (default: POLICY_FILE)")
    parser.add_argument("--time", action="store_true", help="time start-up and matching")
    args = parser.parse_args(argv)
    path = Path(args.file) if args.file else policy_path(os.environ.get("POLICY_FILE"))
    if path is None:
        print("no policy file: give one, or set POLICY_FILE", file=sys.stderr)
        return 2
    started = time.perf_counter()
    parsed = policy_problems(path, _ttl_in_force(os.environ.get("APPROVAL_TTL_SECONDS")))
    read = time.perf_counter()
    if not isinstance(parsed, PolicyFile):
        print("\n".join(parsed), file=sys.stderr)
        return 2
    if not args.time:
        print(f"{path}: {len(parsed.rules)} rules, {len(parsed.mcp_servers)} MCP servers")
        return 0
    policy = CallPolicy(parsed, Fallback(approvers=(), allow_self_approval=False))
    compiled = time.perf_counter()
    figure = _time_calls(
        policy, [json.loads(line) for line in (stdin or sys.stdin) if line.strip()]
    )
    print(
        json.dumps(
            {
                "rules": len(parsed.rules),
                "read_ms": _ms(read - started),
                "compile_ms": _ms(compiled - read),
                "start_ms": _ms(compiled - started),
                **figure,
            }
        )
    )
    return 0


def _ttl_in_force(raw: str | None) -> int:
    """``APPROVAL_TTL_SECONDS`` as the bot would take it (unset or invalid: a day; the bot
    itself reports an invalid value)."""
    try:
        seconds = int(raw or TTL_DEFAULT_SECONDS)
    except ValueError:
        return TTL_DEFAULT_SECONDS
    return seconds if TTL_MIN_SECONDS <= seconds <= TTL_MAX_SECONDS else TTL_DEFAULT_SECONDS


def _time_calls(policy: CallPolicy, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Each call matched once, timed on its own."""
    times: list[float] = []
    matched = 0
    for call in calls:
        tool = str(call["tool"])
        tool_id = str(call.get("id", tool))
        path = tuple(str(call.get("agent", "")).split("/")) if call.get("agent") else ()
        args = dict(call.get("args", {}))
        before = time.perf_counter()
        effective = policy.match(tool, tool_id, path, args)
        times.append(time.perf_counter() - before)
        matched += effective.rule is not None
    ordered = sorted(times) or [0.0]
    return {
        "calls": len(calls),
        "matched": matched,
        "match_median_us": _us(statistics.median(ordered)),
        "match_p99_us": _us(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]),
        "match_max_us": _us(ordered[-1]),
    }


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _us(seconds: float) -> float:
    return round(seconds * 1_000_000, 1)


if __name__ == "__main__":
    sys.exit(main())
