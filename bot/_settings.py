"""``Settings``: every environment variable of countersign, read and checked in one place.

Example:
    >>> settings = load_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"})
    >>> settings.mode
    'http'
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from agents.models import DEFAULT_OPENAI_MODEL
from bot._errors import BotConfigError
from bot._settings_checks import (
    API_TOKEN_ACTS_WITHOUT_TOKEN,
    API_TOKEN_IS_A_PERSONS,
    DEFAULT_COUNTERSIGN_URL,
    approvers,
    check_countersign_url,
    check_gateway,
    check_slack,
    check_storage_url,
    offline_model,
    prompts,
)
from bot.policy import (
    PersonToken,
    PolicyFile,
    TokenFile,
    policy_path,
    policy_problems,
    sha256_hex,
    token_file_problems,
)
from bot.policy._values import TTL_DEFAULT_SECONDS, TTL_MAX_SECONDS, TTL_MIN_SECONDS

logger = logging.getLogger(__name__)

DEMO_POLICY = Path(__file__).parent / "demo" / "countersign.toml"
"""The built-in ops agent's policy (refunds over 1,000 need two approvers)."""

Mode = Literal["http", "socket", "local"]
"""How the bot talks to Slack: HTTP events, Socket Mode, or the local workspace."""

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_LOG_FORMATS = ("text", "json")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


class Settings(BaseModel):
    """The validated configuration (SPEC 8). Build it with ``load_settings``."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    slack_bot_token: SecretStr | None = None
    """``SLACK_BOT_TOKEN``: the bot token (xoxb-…); unset: the local workspace."""
    slack_signing_secret: SecretStr | None = None
    """``SLACK_SIGNING_SECRET``: verifies requests in HTTP mode."""
    slack_app_token: SecretStr | None = None
    """``SLACK_APP_TOKEN``: an app-level token (xapp-…); set: Socket Mode."""
    slack_api_url: str | None = None
    """``SLACK_API_URL``: the Web API base URL (unset: Slack's https://slack.com/api/)."""
    openai_api_key: SecretStr | None = None
    """``OPENAI_API_KEY``: the key of the built-in agent's OpenAI model (unset: offline demo)."""
    openai_base_url: str | None = None
    """``OPENAI_BASE_URL``: any OpenAI-compatible server."""
    openai_model: str = DEFAULT_OPENAI_MODEL
    """``OPENAI_MODEL``: the model name of the built-in agent."""
    model: Literal["offline"] | None = None
    """``MODEL``: offline: every agent, BOT_AGENT's too, runs on the offline model, where
    "/call <tool> key=value" calls a tool, no key needed (unset: each agent's own model)."""
    storage_url: str | None = None
    """``STORAGE_URL``: where runs, memory and the audit log live (unset: ./data/countersign.db)."""
    redis_url: str | None = None
    """``REDIS_URL``: de-duplication and thread locks shared by several instances."""
    bot_agent: str | None = None
    """``BOT_AGENT``: module:attribute of the Agent to serve (unset: the built-in ops agent)."""
    host: str = "0.0.0.0"
    """``HOST``: the address the HTTP server binds to (127.0.0.1 in local mode)."""
    port: int = 3000
    """``PORT``: the port the HTTP server listens on (0: any free port)."""
    approvers: tuple[str, ...] = ()
    """``APPROVERS``: Slack user (U…/W…) and user-group (S…) ids; empty = anyone."""
    allow_self_approval: bool = False
    """``ALLOW_SELF_APPROVAL``: whether the requester may approve their own request."""
    approval_ttl_seconds: int = TTL_DEFAULT_SECONDS
    """``APPROVAL_TTL_SECONDS``: pending approvals expire after this long."""
    claim_lease_seconds: int = 30
    """``CLAIM_LEASE_SECONDS``: seconds a claim is held unrenewed; lapsed ones are taken over"""
    mcp_call_timeout_seconds: int = 60
    """``MCP_CALL_TIMEOUT_SECONDS``: an MCP tool call without an answer by then fails"""
    tool_output_max_bytes: int = 100_000
    """``TOOL_OUTPUT_MAX_BYTES``: the most of an MCP tool result the model is given"""
    api_token: SecretStr | None = None
    """``API_TOKEN``: a service token for /api: its decisions record no person (unset, and no
    API_TOKENS: the API is off)."""
    api_tokens: str | None = None
    """``API_TOKENS``: a TOML file of per-person /api tokens ([[tokens]] user, sha256): each
    decides as its user."""
    api_token_acts_for_users: bool = False
    """``API_TOKEN_ACTS_FOR_USERS``: true: API_TOKEN's decidedBy is taken as the decider (the
    service signs its users in itself)."""
    api_people: tuple[PersonToken, ...] = ()
    """The parsed ``API_TOKENS`` file: who each token (by its SHA-256) decides as."""
    log_level: str = "INFO"
    """``LOG_LEVEL``: DEBUG, INFO, WARNING or ERROR."""
    policy_file: str | None = None
    """``POLICY_FILE``: the approval policy, TOML (unset: ./countersign.toml if present)."""
    policy: PolicyFile = Field(default_factory=PolicyFile)
    """The parsed policy file; its ``[defaults]`` are already applied to the fields above."""
    mcp_environ: dict[str, str] = Field(default_factory=dict, repr=False)
    """The environment variables that ``[[mcp_servers]]`` values name (``${GITHUB_TOKEN}``),
    as read at start-up (only those)."""
    log_format: Literal["text", "json"] = "text"
    """``LOG_FORMAT``: text (one readable line per record) or json (one JSON object per line)."""
    otel_exporter_otlp_endpoint: str | None = None
    """``OTEL_EXPORTER_OTLP_ENDPOINT``: where traces go over OTLP/HTTP (unset: no tracing)."""
    gateway: bool | None = None
    """``GATEWAY``: true: serve MCP clients at /mcp and coding-agent hooks at /api/gate (SPEC
    17); unset: on in the local workspace only."""
    gateway_channel: str | None = None
    """``GATEWAY_CHANNEL``: the Slack channel id (C…/G…) the gateway posts its cards in (the
    local workspace: its channel)."""
    gateway_hold_seconds: int = 45
    """``GATEWAY_HOLD_SECONDS``: how long an MCP call waits for a decision before it answers
    "waiting: call again" (MCP clients give up after about 60 s)"""
    countersign_url: str = DEFAULT_COUNTERSIGN_URL
    """``COUNTERSIGN_URL``: the bot that `gateway --stdio` and `hook claude-code` talk to."""
    countersign_token: SecretStr | None = None
    """``COUNTERSIGN_TOKEN``: your own token (one of the bot's API_TOKENS) for `gateway
    --stdio` and `hook claude-code`."""
    suggested_prompts: tuple[str, ...] = ()
    """``SUGGESTED_PROMPTS``: the prompts of the Messages tab (a legacy assistant thread's),
    separated by "|" (up to 4; unset: the agent's instructions' list items, else "What can you
    do?")."""

    def with_people(self, tokens: Mapping[str, str]) -> Settings:
        """These settings with ``tokens`` (token → Slack user id) as ``API_TOKENS`` would give
        them (the local workspace's people, SPEC 17)."""
        people = tuple(PersonToken(user=user, sha256=sha256_hex(t)) for t, user in tokens.items())
        return self.model_copy(update={"api_people": people})

    @property
    def gateway_on(self) -> bool:
        """Whether the bot serves the gateway: ``GATEWAY``, else on in the local workspace."""
        return self.gateway if self.gateway is not None else self.mode == "local"

    @property
    def mode(self) -> Mode:
        """``socket`` with an app token, ``http`` with a bot token, else ``local``."""
        if self.slack_bot_token is None:
            return "local"
        return "socket" if self.slack_app_token is not None else "http"


def describe_variables() -> list[tuple[str, str | None, str]]:
    """``(VARIABLE, default, what it does)`` for every setting, in declaration order; the
    default is None when the variable is unset by default (what that means is in the text)."""
    rows = []
    for name, field in Settings.model_fields.items():
        if not (field.description or "").startswith("``"):
            continue  # not an environment variable (the parsed policy)
        what = " ".join((field.description or "").split("``: ", 1)[-1].split()).rstrip(".")
        default = field.default
        shown = None if default is None or default == () else str(default)
        shown = shown.lower() if isinstance(default, bool) and shown else shown
        rows.append((name.upper(), shown, what))
    return rows


def logging_settings(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """``(LOG_LEVEL, LOG_FORMAT)`` read leniently (invalid: INFO, text), to log from the very
    start, before ``load_settings`` imports ``BOT_AGENT`` and reports any problem."""
    env = os.environ if environ is None else environ
    level = env.get("LOG_LEVEL", "").strip().upper()
    log_format = env.get("LOG_FORMAT", "").strip().lower()
    return (
        level if level in _LOG_LEVELS else "INFO",
        log_format if log_format in _LOG_FORMATS else "text",
    )


def load_settings(
    environ: Mapping[str, str] | None = None, *, overrides: Mapping[str, str] | None = None
) -> Settings:
    """Read the configuration from ``environ`` (default ``os.environ``), ``overrides`` winning
    (``python -m bot gateway`` is ``GATEWAY=true``).

    Raises ``BotConfigError`` listing every problem found, each with how to fix it.
    """
    env = {**(os.environ if environ is None else environ), **(overrides or {})}
    problems: list[str] = []

    def text(name: str) -> str | None:
        value = env.get(name, "").strip()
        return value or None

    def secret(name: str) -> SecretStr | None:
        value = text(name)
        return None if value is None else SecretStr(value)

    def number(name: str, default: int, low: int, high: int) -> int:
        raw = text(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            problems.append(f"{name} must be a whole number from {low} to {high}, got {raw!r}")
            return default
        return value

    def flag(name: str) -> bool:
        raw = (text(name) or "").lower()
        if raw not in _TRUE + _FALSE:
            problems.append(f"{name} must be true or false, got {env.get(name)!r}")
        return raw in _TRUE

    countersign_url = (text("COUNTERSIGN_URL") or DEFAULT_COUNTERSIGN_URL).rstrip("/")
    check_countersign_url(problems, countersign_url)
    bot_token, app_token = secret("SLACK_BOT_TOKEN"), secret("SLACK_APP_TOKEN")
    signing_secret = secret("SLACK_SIGNING_SECRET")
    check_slack(problems, env, bot_token, app_token, signing_secret)
    storage_url = text("STORAGE_URL")
    check_storage_url(problems, storage_url)
    bot_agent = text("BOT_AGENT")
    if bot_agent is not None:
        problem = check_agent_spec(bot_agent)
        if problem:
            problems.append(problem)
    log_level = (text("LOG_LEVEL") or "INFO").upper()
    if log_level not in _LOG_LEVELS:
        problems.append(f"LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, got {log_level!r}")
        log_level = "INFO"
    offline = offline_model(problems, text("MODEL"))
    log_format = (text("LOG_FORMAT") or "text").lower()
    if log_format not in _LOG_FORMATS:
        problems.append(f"LOG_FORMAT must be text or json, got {log_format!r}")
        log_format = "text"
    settings = Settings(
        slack_bot_token=bot_token,
        slack_signing_secret=signing_secret,
        slack_app_token=app_token,
        slack_api_url=text("SLACK_API_URL"),
        openai_api_key=secret("OPENAI_API_KEY"),
        openai_base_url=text("OPENAI_BASE_URL"),
        openai_model=text("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL,
        model=offline,
        storage_url=storage_url,
        redis_url=text("REDIS_URL"),
        bot_agent=bot_agent,
        host=text("HOST") or ("0.0.0.0" if bot_token is not None else "127.0.0.1"),
        port=number("PORT", 3000, 0, 65535),
        approvers=approvers(problems, text("APPROVERS")),
        allow_self_approval=flag("ALLOW_SELF_APPROVAL"),
        approval_ttl_seconds=number(
            "APPROVAL_TTL_SECONDS", TTL_DEFAULT_SECONDS, TTL_MIN_SECONDS, TTL_MAX_SECONDS
        ),
        claim_lease_seconds=number("CLAIM_LEASE_SECONDS", 30, 1, 365 * 86400),
        mcp_call_timeout_seconds=number("MCP_CALL_TIMEOUT_SECONDS", 60, 1, 86400),
        tool_output_max_bytes=number("TOOL_OUTPUT_MAX_BYTES", 100_000, 1_000, 100_000_000),
        api_token=secret("API_TOKEN"),
        api_tokens=text("API_TOKENS"),
        api_token_acts_for_users=flag("API_TOKEN_ACTS_FOR_USERS"),
        log_level=log_level,
        log_format=log_format,
        otel_exporter_otlp_endpoint=text("OTEL_EXPORTER_OTLP_ENDPOINT"),
        suggested_prompts=prompts(problems, text("SUGGESTED_PROMPTS")),
        gateway=None if text("GATEWAY") is None else flag("GATEWAY"),
        gateway_channel=text("GATEWAY_CHANNEL"),
        gateway_hold_seconds=number("GATEWAY_HOLD_SECONDS", 45, 0, 3600),
        countersign_url=countersign_url,
        countersign_token=secret("COUNTERSIGN_TOKEN"),
    )
    settings = _with_policy(problems, settings, text("POLICY_FILE"))
    settings = _with_api_tokens(problems, settings)
    check_gateway(
        problems,
        on=settings.gateway is True,
        local=settings.mode == "local",
        channel=settings.gateway_channel,
        people=bool(settings.api_people),
    )
    settings = settings.model_copy(update={"mcp_environ": _mcp_environ(settings.policy, env)})
    if problems:
        raise BotConfigError(problems)
    return settings


def _with_policy(problems: list[str], settings: Settings, configured: str | None) -> Settings:
    """The settings with the policy file read and its ``[defaults]`` over the environment, for
    the keys the file sets (a key left out of ``[defaults]`` leaves its variable in force)."""
    path = policy_path(configured)
    if path is None and settings.mode == "local" and settings.bot_agent is None:
        path = DEMO_POLICY  # the built-in agent in the local workspace: its own example
    if path is None:
        return settings
    parsed = policy_problems(path, settings.approval_ttl_seconds)
    if not isinstance(parsed, PolicyFile):
        problems.extend(parsed)
        return settings
    defaults = parsed.defaults
    update: dict[str, object] = {"policy_file": str(path), "policy": parsed}
    for key, field in (
        ("approvers", "approvers"),
        ("allow_self_approval", "allow_self_approval"),
        ("ttl_seconds", "approval_ttl_seconds"),
    ):
        value = getattr(defaults, key)
        if key in defaults.model_fields_set and value is not None:
            update[field] = value
    logger.info(
        "policy file %s in force: %d rules, %d MCP servers",
        path,
        len(parsed.rules),
        len(parsed.mcp_servers),
    )
    return settings.model_copy(update=update)


def _with_api_tokens(problems: list[str], settings: Settings) -> Settings:
    """The settings with the ``API_TOKENS`` file read (every problem reported)."""
    service = settings.api_token
    if settings.api_token_acts_for_users and service is None:
        problems.append(API_TOKEN_ACTS_WITHOUT_TOKEN)
    if settings.api_tokens is None:
        return settings
    parsed = token_file_problems(Path(settings.api_tokens))
    if not isinstance(parsed, TokenFile):
        problems.extend(parsed)
        return settings
    if service is not None:
        digest = sha256_hex(service.get_secret_value())
        if any(entry.sha256 == digest for entry in parsed.tokens):
            problems.append(API_TOKEN_IS_A_PERSONS.format(path=settings.api_tokens))
    return settings.model_copy(update={"api_people": parsed.tokens})


def _mcp_environ(policy: PolicyFile, env: Mapping[str, str]) -> dict[str, str]:
    """The variables the MCP servers' ``env`` and ``headers`` values name, from ``env``."""
    values = [v for e in policy.mcp_servers for v in (*e.env.values(), *e.headers.values())]
    named = {m for value in values for m in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value)}
    return {name: env[name] for name in sorted(named) if name in env}


def check_agent_spec(spec: str) -> str | None:
    """A problem with ``BOT_AGENT`` (format, import, type), or None when it names an Agent."""
    from bot._agent_loader import AgentLoadError, import_agent

    try:
        import_agent(spec)
    except AgentLoadError as exc:
        return str(exc)
    return None
