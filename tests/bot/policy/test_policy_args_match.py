"""SPEC 11 and 17: ``args_match`` rules match arguments (as text) by regular expression, compiled
once; an invalid one is reported at start-up with the rest; ``[gateway] unmatched`` is read and
checked like every other key."""

from __future__ import annotations

from pathlib import Path

from bot.policy import CallPolicy, Fallback, PolicyFile, Rule, policy_problems
from bot.policy._match import CompiledRules

FALLBACK = Fallback(approvers=(), allow_self_approval=False)


def test_args_match_searches_each_named_argument_as_text_and_all_must_match() -> None:
    rules = CompiledRules(
        (
            Rule(tools=("Bash",), args_match={"command": r"^(rm|git push)\b"}),
            Rule(tools=("deploy",), args_match={"env": "^prod$", "force": "true"}),
            Rule(tools=("Bash", "deploy")),
        )
    )
    assert rules.first("Bash", "Bash", "gateway", {"command": "rm -rf build"}) == 0
    assert rules.first("Bash", "Bash", "gateway", {"command": "git push origin"}) == 0
    assert rules.first("Bash", "Bash", "gateway", {"command": "ls; rm x"}) == 2  # ^ anchors
    assert rules.first("Bash", "Bash", "gateway", {"command": "git pushy"}) == 2  # \b
    assert rules.first("Bash", "Bash", "gateway", {}) == 2  # a missing argument never matches
    # a value that is not a string is matched as its JSON text
    assert rules.first("deploy", "deploy", "gateway", {"env": "prod", "force": True}) == 1
    assert rules.first("deploy", "deploy", "gateway", {"env": "prod", "force": False}) == 2
    assert rules.first("deploy", "deploy", "gateway", {"env": "production", "force": True}) == 2


def test_args_match_decides_which_rule_the_runtime_is_given() -> None:
    policy = CallPolicy(
        PolicyFile(
            rules=(
                Rule(tools=("Bash",), args_match={"command": "^rm "}, approvals=2),
                Rule(tools=("Bash",), require_approval=False),
            )
        ),
        FALLBACK,
    )
    risky = policy.call_rules("Bash", "Bash", ("gateway",), {"command": "rm -rf /"})
    assert risky is not None and risky.approvals == 2
    harmless = policy.call_rules("Bash", "Bash", ("gateway",), {"command": "ls"})
    assert harmless is not None and harmless.approvals is None
    assert policy.match("Bash", "Bash", ("gateway",), {"command": "ls"}).rule == 2


def test_an_invalid_pattern_is_reported_at_start_up_with_the_other_problems(
    tmp_path: Path,
) -> None:
    path = tmp_path / "countersign.toml"
    path.write_text(
        "[[rules]]\n"
        'tools = ["Bash"]\n'
        'args_match = { command = "(unclosed", cwd = 3 }\n'
        "approvals = 0\n"
        "\n[gateway]\n"
        'unmatched = "maybe"\n',
        encoding="utf-8",
    )
    problems = policy_problems(path)
    assert isinstance(problems, list)
    text = "\n".join(problems)
    assert f"{path}: rule 1: args_match.command: '(unclosed' is not a valid regular" in text
    assert f"{path}: rule 1: args_match.cwd: must be a regular expression" in text
    assert f"{path}: rule 1: approvals: must be at least 1" in text
    assert f"{path}: [gateway]: unmatched: " in text and "'maybe'" in text
    assert len(problems) == 4


def test_gateway_unmatched_is_hold_unless_the_file_says_allow(tmp_path: Path) -> None:
    assert PolicyFile().gateway.unmatched == "hold"
    path = tmp_path / "countersign.toml"
    path.write_text('[gateway]\nunmatched = "allow"\n', encoding="utf-8")
    parsed = policy_problems(path)
    assert isinstance(parsed, PolicyFile) and parsed.gateway.unmatched == "allow"
