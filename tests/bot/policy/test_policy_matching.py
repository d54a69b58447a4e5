"""SPEC 11: rules are compiled once and matched through an index, with exactly the
first-matching-rule semantics of trying every rule in file order with ``fnmatchcase``."""

from __future__ import annotations

import random
import re
from fnmatch import fnmatchcase
from typing import Any

import pytest

from bot.policy import CallPolicy, Fallback, PolicyFile, Rule

FALLBACK = Fallback(approvers=(), allow_self_approval=False)


def _linear(
    rules: tuple[Rule, ...], name: str, tool_id: str, path: str, args: dict[str, Any]
) -> int | None:
    """The reference: every rule in file order, each glob through ``fnmatchcase``."""
    for number, rule in enumerate(rules, start=1):
        if not any(fnmatchcase(name, g) or fnmatchcase(tool_id, g) for g in rule.tools):
            continue
        if rule.agents is not None and not any(fnmatchcase(path, g) for g in rule.agents):
            continue
        if all(_above(args.get(k), limit) for k, limit in (rule.args_above or {}).items()):
            return number
    return None


def _above(value: Any, limit: float) -> bool:
    if value is None:
        return False
    try:
        return float(value) > limit
    except (TypeError, ValueError):
        return True


def _glob(rng: random.Random) -> str:
    pieces = ["a", "b", "_", "-", "ab", "*", "?", "[ab]", "[!a]", "[", "]"]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))) or "*"


def _rule(rng: random.Random) -> Rule:
    tools = tuple(_glob(rng) for _ in range(rng.randint(1, 3)))
    agents = tuple(_glob(rng) for _ in range(rng.randint(1, 2))) if rng.random() < 0.3 else None
    above = {"amount": rng.choice([0, 10, 99.5])} if rng.random() < 0.3 else None
    return Rule(tools=tools, agents=agents, args_above=above)


def _name(rng: random.Random) -> str:
    return "".join(rng.choice("ab_-[]") for _ in range(rng.randint(0, 6)))


@pytest.mark.parametrize("seed", range(8))
def test_the_index_finds_the_same_first_rule_as_trying_every_rule_in_order(seed: int) -> None:
    rng = random.Random(seed)
    rules = tuple(_rule(rng) for _ in range(300))
    policy = CallPolicy(PolicyFile(rules=rules), FALLBACK)
    for _ in range(2000):
        name, tool_id = _name(rng), _name(rng) if rng.random() < 0.5 else ""
        tool_id = tool_id or name
        path = rng.choice(["", "ab", "a/b", "a_b"])
        args = rng.choice([{}, {"amount": 5}, {"amount": 50}, {"amount": 500}, {"amount": "x"}])
        expected = _linear(rules, name, tool_id, path, args)
        got = policy.match(name, tool_id, tuple(path.split("/")) if path else (), args).rule
        assert got == expected, (name, tool_id, path, args)


def test_an_earlier_rule_wins_over_a_later_more_specific_one_of_any_kind() -> None:
    rules = (
        Rule(tools=("*",), agents=("ops/billing",)),  # matches anything, but only for billing
        Rule(tools=("refund",), args_above={"amount": 100}),
        Rule(tools=("ref*",)),
        Rule(tools=("*und",)),
        Rule(tools=("refund",)),
    )
    policy = CallPolicy(PolicyFile(rules=rules), FALLBACK)
    assert policy.match("refund", "refund", ("ops", "billing"), {}).rule == 1
    assert policy.match("refund", "refund", ("ops",), {"amount": 500}).rule == 2
    assert policy.match("refund", "refund", ("ops",), {"amount": 5}).rule == 3
    assert policy.match("fund", "x-fund", ("ops",), {}).rule == 4
    assert policy.match("list", "list", ("ops",), {}).rule is None


def test_matching_compiles_no_pattern_once_the_policy_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Matching through ``fnmatchcase`` compiled each glob on its first call, and every glob
    again on every call once a file had more than the 32,768 patterns fnmatch keeps."""
    rules = tuple(
        Rule(tools=(f"tool_{i}", f"svc{i}_*", f"*_{i}x", f"job{i}-?"), agents=(f"ops/t{i}*",))
        for i in range(1000)
    )
    policy = CallPolicy(PolicyFile(rules=rules), FALLBACK)
    compiled: list[str] = []
    real = re.compile

    def counting(pattern: Any, flags: int = 0) -> re.Pattern[str]:
        compiled.append(str(pattern))
        return real(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    for i in range(0, 1000, 7):
        assert policy.match(f"job{i}-a", f"job{i}-a", ("ops", f"t{i}"), {}).rule == i + 1
        assert policy.match(f"svc{i}_go", "x", ("ops", f"t{i}9"), {}).rule == i + 1
        assert policy.match("nothing", "nothing", ("ops",), {}).rule is None
    assert compiled == []


def test_a_matched_rule_is_the_same_value_every_time_it_is_asked() -> None:
    """A card asks several times (card rules, confirm, who may decide): the answer is made once."""
    policy = CallPolicy(PolicyFile(rules=(Rule(tools=("refund",), approvals=2),)), FALLBACK)
    first = policy.match("refund", "refund", (), {})
    assert policy.match("refund", "refund", ("ops",), {}) is first
    assert first.approvals == 2
