"""SPEC 11: every number of the policy file is checked at start-up (finite, in range), grants
and escalation steps are parsed and checked, and every problem is one line, all together."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot._errors import BotConfigError
from bot._settings import load_settings
from bot.policy import (
    CallPolicy,
    EscalationStep,
    Fallback,
    Grants,
    PolicyFile,
    policy_problems,
    read_policy,
)

ENV = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}

NUMBERS = """
[defaults]
ttl_seconds = 59

[[rules]]
tools = ["a"]
args_above = { nan = nan, inf = inf, minus = -inf, text = "100", flag = true, fine = 5.5 }
approvals = 11
ttl_seconds = 2592001

[[rules]]
tools = ["b"]
approvals = 10
ttl_seconds = 2592000
args_above = { amount = -3 }
grants = { max_seconds = 0, max_uses = 1.5 }

[[rules]]
tools = ["c"]
grants = { max_seconds = 3600, max_uses = 20, forever = true }

[[rules]]
tools = ["d"]
grants = { max_seconds = inf, max_uses = -1 }
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _problems(tmp_path: Path, text: str, ttl: int | None = None) -> list[str]:
    """The problems of ``text``, without the file name; [] when it is valid."""
    result = policy_problems(_write(tmp_path, text), ttl)
    if isinstance(result, PolicyFile):
        return []
    return [line.split(": ", 1)[1] for line in result]


def test_numbers_that_can_never_work_are_refused_one_line_each(tmp_path: Path) -> None:
    problems = _problems(tmp_path, NUMBERS)
    assert problems == [
        "[defaults]: ttl_seconds: must be at least 60, got 59",
        "rule 1: args_above.nan: must be a finite number, got nan",
        "rule 1: args_above.inf: must be a finite number, got inf",
        "rule 1: args_above.minus: must be a finite number, got -inf",
        "rule 1: args_above.text: must be a number, got '100'",
        "rule 1: args_above.flag: must be a number, got True",
        "rule 1: approvals: must be at most 10, got 11",
        "rule 1: ttl_seconds: must be at most 2592000, got 2592001",
        "rule 2: grants.max_seconds: must be at least 1, got 0",
        "rule 2: grants.max_uses: must be a whole number, got 1.5",
        "rule 3: grants.forever: unknown key",
        "rule 4: grants.max_seconds: must be a whole number, got inf",
        "rule 4: grants.max_uses: must be at least 1, got -1",
    ]


def test_the_ttl_range_is_the_one_of_approval_ttl_seconds(tmp_path: Path) -> None:
    for good in ("60", "2592000"):
        assert load_settings({**ENV, "APPROVAL_TTL_SECONDS": good}).approval_ttl_seconds == int(
            good
        )
    for bad in ("59", "2592001"):
        with pytest.raises(BotConfigError, match="APPROVAL_TTL_SECONDS must be a whole number"):
            load_settings({**ENV, "APPROVAL_TTL_SECONDS": bad})
    path = _write(
        tmp_path, "[defaults]\nttl_seconds = 60\n[[rules]]\ntools = ['a']\nttl_seconds = 2592000\n"
    )
    assert load_settings({**ENV, "POLICY_FILE": str(path)}).approval_ttl_seconds == 60


def test_a_whole_number_too_big_for_a_float_is_a_limit_still(tmp_path: Path) -> None:
    huge = 10**400
    path = _write(tmp_path, f'[[rules]]\ntools = ["a"]\nargs_above = {{ amount = {huge} }}\n')
    policy = CallPolicy(read_policy(path), Fallback(approvers=(), allow_self_approval=False))
    assert policy.match("a", "a", (), {"amount": 10**399}).rule is None
    assert policy.match("a", "a", (), {"amount": huge + 1}).rule == 1


ESCALATE = """
[[rules]]
tools = ["refund"]
ttl_seconds = 7200
grants = { max_seconds = 3600, max_uses = 20 }
escalate = [
  { after = "15m", notify = ["S0ONCALL"] },
  { after = "1h", approvers = ["S0LEADS"], notify = ["S0LEADS", "U1"] },
  { after = "90s", approvers = ["U2"] },
]
"""


def test_grants_and_escalation_steps_are_parsed_onto_the_rule_and_the_match(
    tmp_path: Path,
) -> None:
    text = ESCALATE.replace('{ after = "90s", approvers = ["U2"] },\n', "")
    policy = read_policy(_write(tmp_path, text))
    [rule] = policy.rules
    assert rule.grants == Grants(max_seconds=3600, max_uses=20)
    assert rule.escalate == (
        EscalationStep(after=timedelta(minutes=15), notify=("S0ONCALL",)),
        EscalationStep(after=timedelta(hours=1), approvers=("S0LEADS",), notify=("S0LEADS", "U1")),
    )
    matched = CallPolicy(policy, Fallback(approvers=(), allow_self_approval=False)).match(
        "refund", "refund", ("ops",), {}
    )
    assert matched.grants == rule.grants and matched.escalate == rule.escalate
    with pytest.raises(AttributeError):
        matched.grants.max_uses = 99  # type: ignore[misc,union-attr]
    assert read_policy(_write(tmp_path, '[[rules]]\ntools = ["x"]\n')).rules[0].grants is None


def test_escalation_steps_need_someone_a_duration_and_increasing_times(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        ESCALATE
        + """
[[rules]]
tools = ["b"]
escalate = [
  { after = "15m" },
  { after = 900, notify = ["U1"] },
  { after = "0s", notify = ["U1"] },
  { after = "2w", notify = ["U1"], who = ["U2"] },
  { after = "1h", notify = ["someone"] },
]
""",
    )
    assert problems == [
        "rule 1: escalate: steps must come in strictly increasing after, got 1h then 90s",
        "rule 2: escalate.0: give notify or approvers (or both)",
        "rule 2: escalate.1.after: must be a duration: a whole number followed by s, m, h or d "
        "(90s, 15m, 12h, 30d), got 900",
        "rule 2: escalate.2.after: must be after 0s, got '0s'",
        "rule 2: escalate.3.after: must be a duration: a whole number followed by s, m, h or d "
        "(90s, 15m, 12h, 30d), got '2w'",
        "rule 2: escalate.3.who: unknown key",
        "rule 2: escalate.4.notify.0: 'someone' is not a Slack user (U…/W…) or user-group (S…) id",
    ]
    equal = ESCALATE.replace('"90s", approvers', '"60m", approvers')
    assert _problems(tmp_path, equal) == [
        "rule 1: escalate: steps must come in strictly increasing after, got 1h then 1h"
    ]


def test_each_step_comes_before_the_ttl_of_the_rule_then_defaults_then_environment(
    tmp_path: Path,
) -> None:
    text = """
[defaults]
ttl_seconds = 3600

[[rules]]
tools = ["own"]
ttl_seconds = 600
escalate = [{ after = "5m", notify = ["U1"] }, { after = "10m", notify = ["U1"] }]

[[rules]]
tools = ["inherits"]
escalate = [{ after = "59m", notify = ["U1"] }, { after = "2h", notify = ["U1"] }]
"""
    assert _problems(tmp_path, text) == [
        "rule 1: escalate.1.after: 10m is not before the TTL of the rule's calls "
        "(600 s, its ttl_seconds)",
        "rule 2: escalate.1.after: 2h is not before the TTL of the rule's calls "
        "(3600 s, [defaults] ttl_seconds)",
    ]
    no_defaults = text.replace("[defaults]\nttl_seconds = 3600\n", "").replace('"10m"', '"9m"')
    assert _problems(tmp_path, no_defaults, ttl=7201) == []
    assert _problems(tmp_path, no_defaults) == []  # no TTL in force given: not checked
    assert _problems(tmp_path, no_defaults, ttl=7200) == [  # exactly the TTL: too late
        "rule 2: escalate.1.after: 2h is not before the TTL of the rule's calls "
        "(7200 s, APPROVAL_TTL_SECONDS)"
    ]
    path = _write(tmp_path, no_defaults)
    with pytest.raises(BotConfigError) as caught:
        load_settings({**ENV, "POLICY_FILE": str(path), "APPROVAL_TTL_SECONDS": "3600"})
    assert caught.value.problems == [
        f"{path}: rule 2: escalate.1.after: 2h is not before the TTL of the rule's calls "
        "(3600 s, APPROVAL_TTL_SECONDS)"
    ]
    # the default APPROVAL_TTL_SECONDS (a day) leaves room
    assert load_settings({**ENV, "POLICY_FILE": str(path)}).policy.rules[1].escalate


def test_late_steps_are_reported_with_the_other_problems_of_the_file(tmp_path: Path) -> None:
    text = """
[[rules]]
tools = ["a"]
approvals = 0

[[rules]]
tools = ["b"]
ttl_seconds = 600
escalate = [{ after = "1h", notify = ["U1"] }]
"""
    assert _problems(tmp_path, text) == [
        "rule 1: approvals: must be at least 1, got 0",
        "rule 2: escalate.0.after: 1h is not before the TTL of the rule's calls "
        "(600 s, its ttl_seconds)",
    ]


def test_a_valid_policy_is_returned_as_parsed(tmp_path: Path) -> None:
    result = policy_problems(_write(tmp_path, NUMBERS.split("[[rules]]")[0].replace("59", "60")))
    assert isinstance(result, PolicyFile) and result.defaults.ttl_seconds == 60


EXTEND = """
[defaults]
ttl_seconds = 3600

[[rules]]
tools = ["refund"]
ttl_seconds = 86400
max_ttl_seconds = 259200

[[rules]]
tools = ["a"]
max_ttl_seconds = 1800

[[rules]]
tools = ["b"]
ttl_seconds = 600
max_ttl_seconds = 3000000
"""


def test_a_rules_max_ttl_reaches_the_runtime_and_is_never_below_its_ttl(tmp_path: Path) -> None:
    valid = EXTEND.split('[[rules]]\ntools = ["a"]')[0]
    policy = CallPolicy(
        read_policy(_write(tmp_path, valid)), Fallback(approvers=(), allow_self_approval=False)
    )
    rules = policy.call_rules("refund", "refund", ("ops",), {})
    assert rules is not None
    assert (rules.ttl_seconds, rules.max_ttl_seconds) == (86400.0, 259200.0)
    assert _problems(tmp_path, EXTEND) == [
        "rule 3: max_ttl_seconds: must be at most 2592000, got 3000000",
        "rule 2: max_ttl_seconds: 1800 is shorter than the TTL of the rule's calls "
        "(3600 s, [defaults] ttl_seconds)",
    ]
