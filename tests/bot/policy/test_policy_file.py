"""SPEC 11: the policy file is read at start-up; every problem on its own line (file, rule
number, key); rules match by tool and agent globs, first match wins; [defaults] over the env."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from agents import GrantLimits
from bot.__main__ import main
from bot._errors import BotConfigError
from bot._settings import DEMO_POLICY, load_settings
from bot.policy import CallPolicy, Fallback, Grants, PolicyFile, read_policy

ENV = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}

BROKEN = """
[defaults]
approvers = ["alice"]
colour = "red"

[[rules]]
tools = ["delete-*"]
approvals = 0

[[rules]]
tools = []
agents = [""]
confirm = "yes"

[[rules]]
approvers = ["U1"]

[[mcp_servers]]
name = "github"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_problem_is_one_line_naming_the_file_the_rule_and_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path, BROKEN)
    with pytest.raises(BotConfigError) as caught:
        load_settings({**ENV, "POLICY_FILE": str(path)})
    problems = caught.value.problems
    assert (
        f"{path}: [defaults]: approvers.0: 'alice' is not a Slack user (U…/W…) or "
        "user-group (S…) id" in problems
    )
    assert f"{path}: [defaults]: colour: unknown key" in problems
    assert f"{path}: rule 1: approvals: must be at least 1, got 0" in problems
    assert f"{path}: rule 2: tools: must not be empty" in problems
    assert f"{path}: rule 2: agents.0: must not be empty" in problems
    assert any(p.startswith(f"{path}: rule 2: confirm: ") for p in problems)
    assert f"{path}: rule 3: tools: missing (required)" in problems
    assert any(p.startswith(f"{path}: mcp_servers entry 1: give exactly one") for p in problems)
    assert all("\n" not in p for p in problems)


def test_invalid_toml_and_a_missing_file_are_reported_not_raised(tmp_path: Path) -> None:
    bad = _write(tmp_path, "[[rules]\ntools = [")
    with pytest.raises(BotConfigError, match=r"policy.toml: not valid TOML"):
        read_policy(bad)
    with pytest.raises(BotConfigError, match=r"cannot read the policy file"):
        load_settings({**ENV, "POLICY_FILE": str(tmp_path / "nope.toml")})


def test_main_exits_2_with_the_policy_problems_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("POLICY_FILE", str(_write(tmp_path, BROKEN)))
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "rule 1: approvals: must be at least 1" in err
    assert "Traceback" not in err


def test_help_lists_policy_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "POLICY_FILE" in capsys.readouterr().out


def test_defaults_override_the_environment_which_stays_the_fallback(tmp_path: Path) -> None:
    env = {**ENV, "APPROVERS": "U9", "ALLOW_SELF_APPROVAL": "true", "APPROVAL_TTL_SECONDS": "600"}
    path = _write(tmp_path, '[defaults]\napprovers = ["U1", "S1"]\nttl_seconds = 120\n')
    settings = load_settings({**env, "POLICY_FILE": str(path)})
    assert settings.approvers == ("U1", "S1")
    assert settings.approval_ttl_seconds == 120
    assert settings.allow_self_approval is True  # not in [defaults]: the environment's
    assert settings.policy_file == str(path)


def test_mcp_servers_are_accepted_and_exposed_as_parsed_values(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[[mcp_servers]]\nname = "github"\ncommand = ["github-mcp-server", "stdio"]\n'
        'env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }\n\n'
        '[[mcp_servers]]\nname = "docs"\nurl = "http://127.0.0.1:8080/mcp"\n'
        'headers = { Authorization = "Bearer x" }\n',
    )
    github, docs = read_policy(path).mcp_servers
    assert github.command == ("github-mcp-server", "stdio")
    assert github.env == {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
    assert (docs.url, docs.headers) == ("http://127.0.0.1:8080/mcp", {"Authorization": "Bearer x"})


RULES = """
[[rules]]
tools = ["refund"]
agents = ["ops/billing"]
args_above = { amount = 1000 }
approvals = 2

[[rules]]
tools = ["github_*"]
approvers = ["S1"]
require_approval = true

[[rules]]
tools = ["delete-*", "refund"]
ttl_seconds = 60
confirm = true
"""


def _policy(tmp_path: Path) -> CallPolicy:
    return CallPolicy(
        read_policy(_write(tmp_path, RULES)), Fallback(approvers=("U9",), allow_self_approval=False)
    )


def test_rules_match_tool_globs_on_id_or_name_agent_paths_and_the_first_match_wins(
    tmp_path: Path,
) -> None:
    policy = _policy(tmp_path)
    big = policy.match("refund", "refund", ("ops", "billing"), {"amount": 5000})
    assert (big.rule, big.approvals, big.approvers) == (1, 2, ("U9",))
    small = policy.match("refund", "refund", ("ops", "billing"), {"amount": 50})
    assert (small.rule, small.approvals, small.ttl_seconds, small.confirm) == (3, None, 60, True)
    elsewhere = policy.match("refund", "refund", ("ops",), {"amount": 5000})
    assert elsewhere.rule == 3
    mcp = policy.match("github_create_issue", "github_create_issue", ("ops",), {})
    assert (mcp.rule, mcp.require_approval, mcp.approvers) == (2, True, ("S1",))
    by_id = policy.match("delete_record", "delete-record", ("ops",), {})
    assert by_id.rule == 3
    none = policy.match("list_records", "list-records", ("ops",), {})
    assert (none.rule, none.approvers, none.allow_self_approval) == (None, ("U9",), False)
    unmatched = policy.call_rules("list_records", "list-records", ("ops",), {})
    assert not unmatched.matched and not unmatched.require_approval  # the defaults only


def test_the_built_in_agent_ships_a_valid_policy_the_local_workspace_uses() -> None:
    policy = read_policy(DEMO_POLICY)
    refunds, records = policy.rules
    assert (refunds.approvals, refunds.args_above) == (2, {"amount": 1000})
    waited = [(step.after, step.notify, step.approvers) for step in refunds.escalate]
    assert waited == [
        (timedelta(minutes=15), ("S0APPROVERS",), ()),
        (timedelta(hours=1), ("U0ROBIN",), ("U0ROBIN",)),
    ]
    # One-hour grants; the modal lets the record vary by default.
    assert records.grants == Grants(max_seconds=3600, max_uses=20, free_args=("id",))
    assert records.tools == ("list-records", "delete-record")
    local = load_settings({})
    assert local.mode == "local" and local.policy == policy
    assert load_settings(ENV).policy == PolicyFile()


def test_a_rules_grants_reach_the_runtime_as_the_calls_grant_limits() -> None:
    policy = CallPolicy(read_policy(DEMO_POLICY), Fallback(approvers=(), allow_self_approval=True))

    rules = policy.call_rules("delete_record", "delete-record", ("ops",), {"id": "r1"})
    refund = policy.call_rules("refund", "refund", ("ops", "billing"), {"amount": 5000})

    assert rules is not None and rules.grants == GrantLimits(max_seconds=3600, max_uses=20)
    assert refund is not None and refund.grants is None


TOML_MISTAKES = """
[defaults]
approvers = "U1"
allow_self_approval = "yes"

[[rules]]
tools = "delete-record"
args_above = 5
grants = 3
escalate = { after = "15m", notify = ["S1"] }

[[rules]]
tools = [3]

[[mcp_servers]]
name = "git hub"
command = "npx server"
url = 5
headers = "x"
"""


def test_a_toml_mistake_is_told_in_toml_words_never_pydantics(tmp_path: Path) -> None:
    """A person who wrote a string where a list goes reads how to write the list, not "Input
    should be a valid tuple"; a list whose items are wrong is not also called empty."""
    path = _write(tmp_path, TOML_MISTAKES)
    with pytest.raises(BotConfigError) as caught:
        load_settings({**ENV, "POLICY_FILE": str(path)})
    problems = [p.removeprefix(f"{path}: ") for p in caught.value.problems]
    assert problems == [
        """[defaults]: approvers: must be a list in brackets: approvers = ["U1"], got 'U1'""",
        "[defaults]: allow_self_approval: must be true or false (without quotes), got 'yes'",
        """rule 1: tools: must be a list in brackets: tools = ["delete-record"], got """
        "'delete-record'",
        "rule 1: args_above: must be a table in braces: args_above = { amount = 1000 }, got 5",
        "rule 1: grants: must be a table in braces: grants = { max_seconds = 3600, max_uses = "
        "20 }, got 3",
        """rule 1: escalate: must be a list of tables: escalate = [{ after = "15m", notify = """
        """["S0ONCALL"] }], got {'after': '15m', 'notify': ['S1']}""",
        "rule 2: tools.0: must be text in quotes, got 3",
        "mcp_servers entry 1: name: may hold only letters, digits, - and _, and must start with "
        "a letter or digit, got 'git hub'",
        """mcp_servers entry 1: command: must be a list in brackets: command = ["npx", """
        """"server"], got 'npx server'""",
        "mcp_servers entry 1: url: must be text in quotes, got 5",
        """mcp_servers entry 1: headers: must be a table in braces: headers = { Authorization = """
        """"Bearer ${TOKEN}" }, got 'x'""",
    ]
    for problem in problems:
        assert "Input should" not in problem and "instance of" not in problem, problem


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("rules = 5\n", "rules: must be one [[rules]] section per rule, got 5"),
        ("defaults = 3\n", "[defaults]: must be a [defaults] section of key = value lines, got 3"),
        ('[[mcp_servers]]\nname = "x"\nurl = "ftp://x"\n', "must start with http:// or https://"),
    ],
)
def test_a_misplaced_section_is_told_how_to_write_it(
    tmp_path: Path, text: str, problem: str
) -> None:
    [said] = read_problems(_write(tmp_path, text))
    assert problem in said and "Input should" not in said


def read_problems(path: Path) -> list[str]:
    with pytest.raises(BotConfigError) as caught:
        read_policy(path)
    return caught.value.problems
