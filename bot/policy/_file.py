"""The approval policy file (SPEC 11): TOML read with ``tomllib``, validated with pydantic.

``read_policy(path)`` returns the parsed ``PolicyFile`` or raises ``BotConfigError`` listing every
problem at once, one line each naming the file, the rule number (1-based) and the key, e.g.
``countersign.toml: rule 2: approvals: must be at least 1, got 0``. What can never work is
refused here: ``ttl_seconds`` outside 60 s – 30 days (as ``APPROVAL_TTL_SECONDS``), ``approvals``
outside 1–10, ``args_above`` limits that are not finite numbers, ``args_match`` patterns that
are not regular expressions, ``grants`` limits that are not positive integers, ``escalate``
steps without anyone to tell, out of order, or not before the TTL of the rule's calls, a
``max_ttl_seconds`` shorter than that TTL. Nothing
here starts anything: ``[[mcp_servers]]`` entries are parsed values for whoever starts the
servers, ``grants`` and ``escalate`` parsed values for whoever grants and escalates (SPEC 15),
``[gateway]`` for the gateway (SPEC 17).

Example:
    >>> policy = read_policy("countersign.toml")  # doctest: +SKIP
    >>> policy.rules[0].approvals
    2
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from bot._errors import BotConfigError
from bot.policy._toml_words import gc_paused, problem_lines, toml_file
from bot.policy._values import (
    APPROVALS_MAX,
    ApproverId,
    EscalationStep,
    Grants,
    Limit,
    TtlSeconds,
    increasing,
    show_duration,
)

DEFAULT_POLICY_FILE = "countersign.toml"
"""Read from the working directory when ``POLICY_FILE`` is unset and it exists."""

Glob = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""An ``fnmatch`` glob (``*``, ``?``, ``[abc]``), case-sensitive."""

_MODEL = ConfigDict(extra="forbid", frozen=True)


def _pattern(value: object) -> str:
    """An ``args_match`` value: a regular expression Python compiles (kept as written)."""
    if not isinstance(value, str):
        raise PydanticCustomError(
            "policy", "must be a regular expression (a string), got {given}", {"given": repr(value)}
        )
    try:
        re.compile(value)
    except re.error as exc:
        raise PydanticCustomError(
            "policy",
            "{given} is not a valid regular expression: {error}",
            {"given": repr(value), "error": str(exc)},
        ) from None
    return value


Pattern = Annotated[str, BeforeValidator(_pattern)]
"""A regular expression (Python's ``re``), searched in an argument's text."""


class Defaults(BaseModel):
    """``[defaults]``: over ``APPROVERS``, ``ALLOW_SELF_APPROVAL``, ``APPROVAL_TTL_SECONDS``, for
    the keys the file sets (``model_fields_set``); the environment keeps the others."""

    model_config = _MODEL

    approvers: tuple[ApproverId, ...] | None = None
    """Who may decide any call (users and user groups); empty list: anyone."""
    allow_self_approval: StrictBool | None = None
    """Whether the requester may approve their own call."""
    ttl_seconds: TtlSeconds | None = None
    """Seconds until a pending approval expires (60 s to 30 days)."""


class Rule(BaseModel):
    """One ``[[rules]]`` entry; the first rule matching a call applies, fields left out inherit
    ``[defaults]`` (then the environment)."""

    model_config = _MODEL

    tools: Annotated[tuple[Glob, ...], Field(min_length=1)]
    """Globs on the tool's id or model-facing name (the inner tool for sub-agents; MCP tools are
    ``<server>_<tool>``)."""
    description: Annotated[str, StringConstraints(min_length=1, max_length=300)] | None = None
    """What the rule is for, in words a card shows ("Refunds over 1,000 need finance");
    left out: the card describes its tools and conditions."""
    agents: Annotated[tuple[Glob, ...], Field(min_length=1)] | None = None
    """Globs on the agent path joined by ``/`` (``ops/billing``); left out: any agent."""
    args_above: dict[str, Limit] | None = None
    """Match only when each named argument is above the (finite) number (an argument that is
    not a number matches: fail safe), e.g. ``{ amount = 1000 }``."""
    args_match: dict[str, Pattern] | None = None
    """Match only when each named argument, as text, contains a match of the regular
    expression (``re.search``; a string is its own text, any other value its JSON; a missing
    argument does not match), e.g. ``{ command = "^(rm|git push)\\b" }``."""
    require_approval: StrictBool = False
    """True ADDS approval to a tool that has none; false adds none and never removes any."""
    approvals: Annotated[StrictInt, Field(ge=1, le=APPROVALS_MAX)] | None = None
    """Distinct approvers needed (quorum, 1–10); never below the tool's own ``approvals``."""
    approvers: tuple[ApproverId, ...] | None = None
    """Who may decide calls this rule matches (users and user groups)."""
    allow_self_approval: StrictBool | None = None
    """Whether the requester may approve their own call."""
    ttl_seconds: TtlSeconds | None = None
    """Seconds until the call's approval expires (stored as its ``expires_at``; 60 s–30 days)."""
    max_ttl_seconds: TtlSeconds | None = None
    """How long "Extend" may keep a call decidable in all, from when it was presented (each
    Extend moves ``expires_at`` by the TTL once more, never past this); at least the TTL of the
    rule's calls. Left out: calls of the rule cannot be extended."""
    confirm: StrictBool = False
    """Approve asks "are you sure?" first."""
    grants: Grants | None = None
    """The standing grants this rule's calls allow; None: no grant may be created for them."""
    escalate: Annotated[tuple[EscalationStep, ...], AfterValidator(increasing)] = ()
    """What happens while a call pends undecided, in strictly increasing ``after``, each before
    the TTL of the rule's calls."""


class MCPServerEntry(BaseModel):
    """One ``[[mcp_servers]]`` entry (SPEC 14): a stdio ``command`` or an HTTP ``url``."""

    model_config = _MODEL

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
    """Prefix of the server's tool names (``<name>_<tool>``)."""
    command: Annotated[tuple[str, ...], Field(min_length=1)] | None = None
    """The program and its arguments (stdio transport)."""
    url: Annotated[str, StringConstraints(pattern=r"^https?://")] | None = None
    """The server's streamable-HTTP endpoint."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment of a stdio server (values as written; ``${VAR}`` is left to the starter)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers of a ``url`` server."""
    timeout_seconds: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)] | None = None
    """How long one call may take on this server (unset: ``MCP_CALL_TIMEOUT_SECONDS``)."""

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command or url")
        return self


class GatewayPolicy(BaseModel):
    """``[gateway]`` (SPEC 17): what the coding-agent hook does with calls no rule matches."""

    model_config = _MODEL

    unmatched: Literal["hold", "allow"] = "hold"
    """``hold``: a client's tool call that no rule matches waits for a person; ``allow``: it
    runs at once."""


class PolicyFile(BaseModel):
    """The whole file; an absent file is ``PolicyFile()`` (no rules)."""

    model_config = _MODEL

    defaults: Defaults = Field(default_factory=Defaults)
    """``[defaults]``."""
    rules: tuple[Rule, ...] = ()
    """``[[rules]]`` in file order."""
    mcp_servers: tuple[MCPServerEntry, ...] = ()
    """``[[mcp_servers]]`` in file order."""
    gateway: GatewayPolicy = Field(default_factory=GatewayPolicy)
    """``[gateway]``."""


def policy_path(configured: str | None, cwd: Path | None = None) -> Path | None:
    """``POLICY_FILE`` when set, else ``./countersign.toml`` when it exists, else None."""
    if configured:
        return Path(configured)
    default = (cwd or Path.cwd()) / DEFAULT_POLICY_FILE
    return default if default.is_file() else None


def read_policy(path: Path) -> PolicyFile:
    """Parse and validate ``path``; raises ``BotConfigError`` with every problem."""
    problems = policy_problems(path)
    if isinstance(problems, PolicyFile):
        return problems
    raise BotConfigError(problems)


def policy_problems(path: Path, ttl_seconds: int | None = None) -> PolicyFile | list[str]:
    """The parsed file, or one line per problem (file, rule number, key, what is wrong).

    ``ttl_seconds`` is the TTL in force where neither a rule nor ``[defaults]`` sets one
    (``APPROVAL_TTL_SECONDS``): such rules' ``escalate`` steps must come before it too; None:
    they are not checked against a TTL.
    """
    data = toml_file(path, "policy file", "POLICY_FILE")
    if isinstance(data, list):
        return data
    try:
        with gc_paused():
            policy = PolicyFile.model_validate(data)
    except ValidationError as exc:
        problems = problem_lines(path, exc)
        defaults, rules = _valid_parts(data)
        return problems + _late_steps(path, defaults, rules, ttl_seconds)
    late = _late_steps(path, policy.defaults, enumerate(policy.rules, start=1), ttl_seconds)
    return late or policy


def _valid_parts(data: dict[str, Any]) -> tuple[Defaults | None, list[tuple[int, Rule]]]:
    """The ``[defaults]`` (None: invalid) and the valid rules of a file that did not validate
    as a whole, so that its late escalation steps are reported with its other problems."""
    try:
        defaults: Defaults | None = Defaults.model_validate(data.get("defaults", {}))
    except ValidationError:
        defaults = None
    raw = data.get("rules")
    rules: list[tuple[int, Rule]] = []
    for number, entry in enumerate(raw if isinstance(raw, list) else [], start=1):
        try:
            rules.append((number, Rule.model_validate(entry)))
        except ValidationError:
            continue
    return defaults, rules


def _late_steps(
    path: Path,
    defaults: Defaults | None,
    rules: Iterable[tuple[int, Rule]],
    fallback_ttl: int | None,
) -> list[str]:
    """One line per ``escalate`` step that is not before the TTL of its rule's calls, and per
    ``max_ttl_seconds`` shorter than that TTL."""
    problems = []
    for number, rule in rules:
        if not rule.escalate and rule.max_ttl_seconds is None:
            continue
        if rule.ttl_seconds is not None:
            ttl, source = rule.ttl_seconds, "its ttl_seconds"
        elif defaults is None:
            continue  # [defaults] is invalid (reported): its TTL is unknown
        elif defaults.ttl_seconds is not None:
            ttl, source = defaults.ttl_seconds, "[defaults] ttl_seconds"
        elif fallback_ttl is not None:
            ttl, source = fallback_ttl, "APPROVAL_TTL_SECONDS"
        else:
            continue
        if rule.max_ttl_seconds is not None and rule.max_ttl_seconds < ttl:
            problems.append(
                f"{path}: rule {number}: max_ttl_seconds: {rule.max_ttl_seconds} is shorter than "
                f"the TTL of the rule's calls ({ttl} s, {source})"
            )
        for index, step in enumerate(rule.escalate):
            if step.after >= timedelta(seconds=ttl):
                problems.append(
                    f"{path}: rule {number}: escalate.{index}.after: {show_duration(step.after)} "
                    f"is not before the TTL of the rule's calls ({ttl} s, {source})"
                )
    return problems
