"""The checks of ``bot._settings`` that read one or two variables each, and what each problem
says (how to fix it). ``load_settings`` runs them all and reports every problem together.

``client_settings`` reads the two variables of the gateway's client commands (``gateway
--stdio``, ``hook claude-code``) here rather than in ``bot._settings``: a coding agent runs its
hook before every tool call, so the hook must start without importing the bot (``bot._settings``
imports the policy, the runtime and the MCP SDK: seconds).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import SecretStr

DEFAULT_COUNTERSIGN_URL = "http://127.0.0.1:3000"
"""``COUNTERSIGN_URL`` when unset: a bot on this machine's default port."""

STORAGE_SCHEMES = ("memory", "sqlite+aiosqlite", "postgresql+asyncpg", "redis", "rediss")

# -- configuration problems: each message says what to do ---------------------------------------
SIGNING_SECRET_MISSING = (
    "Set SLACK_SIGNING_SECRET (Slack app → Basic Information → Signing Secret): HTTP mode "
    "verifies every request Slack sends"
)
OAUTH_VARIABLES_SET = (
    "Unset SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: countersign is a single-workspace bot "
    "(with both set, slack-bolt switches to OAuth and ignores SLACK_BOT_TOKEN)"
)
BOT_TOKEN_FORMAT = (
    "SLACK_BOT_TOKEN must be a bot token starting with xoxb- (Slack app → OAuth & Permissions "
    "→ Bot User OAuth Token)"
)
APP_TOKEN_FORMAT = (
    "SLACK_APP_TOKEN must be an app-level token starting with xapp- with the connections:write "
    "scope (Slack app → Basic Information → App-Level Tokens)"
)
APP_TOKEN_WITHOUT_BOT_TOKEN = (
    "Set SLACK_BOT_TOKEN too: Socket Mode (SLACK_APP_TOKEN) still posts with the bot token "
    "(Slack app → OAuth & Permissions → Bot User OAuth Token)"
)
SIGNING_SECRET_WITHOUT_BOT_TOKEN = (
    "Set SLACK_BOT_TOKEN (Slack app → OAuth & Permissions → Bot User OAuth Token), or unset "
    "SLACK_SIGNING_SECRET to run without Slack"
)
API_TOKEN_ACTS_WITHOUT_TOKEN = (
    "API_TOKEN_ACTS_FOR_USERS=true needs API_TOKEN (the service token whose decidedBy is taken "
    "as the decider): set API_TOKEN, or unset API_TOKEN_ACTS_FOR_USERS"
)
API_TOKEN_IS_A_PERSONS = (
    "API_TOKEN is also a person's token in {path}: give the service and each person a token of "
    "their own"
)
MODEL_UNKNOWN = (
    "MODEL must be offline (every agent on the offline model: /call <tool> key=value calls a "
    "tool, no key needed) or unset, got {raw!r}; the OpenAI model's name goes in OPENAI_MODEL"
)
AUTH_TEST_FAILED = (
    "Slack rejected SLACK_BOT_TOKEN (auth.test: {error}). Copy the Bot User OAuth Token again "
    "(Slack app → OAuth & Permissions) and check SLACK_API_URL"
)


def check_slack(
    problems: list[str],
    env: Mapping[str, str],
    bot_token: SecretStr | None,
    app_token: SecretStr | None,
    signing_secret: SecretStr | None,
) -> None:
    if env.get("SLACK_CLIENT_ID", "").strip() and env.get("SLACK_CLIENT_SECRET", "").strip():
        problems.append(OAUTH_VARIABLES_SET)
    if bot_token is not None and not bot_token.get_secret_value().startswith("xoxb-"):
        problems.append(BOT_TOKEN_FORMAT)
    if app_token is not None and not app_token.get_secret_value().startswith("xapp-"):
        problems.append(APP_TOKEN_FORMAT)
    if app_token is not None and bot_token is None:
        problems.append(APP_TOKEN_WITHOUT_BOT_TOKEN)
    if bot_token is not None and app_token is None and signing_secret is None:
        problems.append(SIGNING_SECRET_MISSING)
    if signing_secret is not None and bot_token is None and app_token is None:
        problems.append(SIGNING_SECRET_WITHOUT_BOT_TOKEN)


def offline_model(problems: list[str], raw: str | None) -> Literal["offline"] | None:
    """``MODEL``: ``offline`` or unset."""
    if raw is None:
        return None
    if raw.lower() == "offline":
        return "offline"
    problems.append(MODEL_UNKNOWN.format(raw=raw))
    return None


def prompts(problems: list[str], raw: str | None) -> tuple[str, ...]:
    listed = tuple(p.strip() for p in (raw or "").split("|") if p.strip())
    if len(listed) > 4:
        problems.append(
            f"SUGGESTED_PROMPTS holds {len(listed)} prompts: Slack shows at most 4 (separate "
            "them with |)"
        )
        return listed[:4]
    return listed


def approvers(problems: list[str], raw: str | None) -> tuple[str, ...]:
    ids = tuple((raw or "").replace(",", " ").split())
    bad = [i for i in ids if not re.fullmatch(r"[UWS][A-Z0-9]+", i)]
    if bad:
        problems.append(
            "APPROVERS must list Slack user ids (U…/W…) and user-group ids (S…), separated by "
            f"commas or spaces (profile → ⋮ → Copy member ID), got {', '.join(map(repr, bad))}"
        )
    return ids


def check_storage_url(problems: list[str], url: str | None) -> None:
    if url is None:
        return
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in STORAGE_SCHEMES:
        problems.append(
            f"STORAGE_URL must start with one of {', '.join(s + '://' for s in STORAGE_SCHEMES)}"
            f" (for example sqlite+aiosqlite:///./data/countersign.db), got scheme {scheme!r}"
        )


GATEWAY_CHANNEL_MISSING = (
    "Set GATEWAY_CHANNEL to the Slack channel the gateway posts its cards in (the channel's id, "
    "C… or G…: channel name → View channel details → the id at the bottom), and invite the bot "
    "there; or unset GATEWAY"
)
GATEWAY_CHANNEL_FORMAT = (
    "GATEWAY_CHANNEL must be a Slack channel id (C… or G…: channel name → View channel details "
    "→ the id at the bottom), got {given!r}"
)
GATEWAY_WITHOUT_PEOPLE = (
    "GATEWAY=true needs API_TOKENS (a file of per-person tokens): every MCP client and hook "
    "sends its person's token, and that person is who asked for the call"
)
COUNTERSIGN_URL_FORMAT = (
    "COUNTERSIGN_URL must be the bot's base URL, http:// or https:// (for example "
    "http://127.0.0.1:3000), got {given!r}"
)


def check_gateway(
    problems: list[str],
    *,
    on: bool,
    local: bool,
    channel: str | None,
    people: bool,
) -> None:
    """What the gateway (SPEC 17) needs when it is on: a channel for its cards and people's
    tokens (the local workspace brings both)."""
    if channel is not None and not re.fullmatch(r"[CG][A-Z0-9]+", channel):
        problems.append(GATEWAY_CHANNEL_FORMAT.format(given=channel))
    if not on or local:
        return
    if channel is None:
        problems.append(GATEWAY_CHANNEL_MISSING)
    if not people:
        problems.append(GATEWAY_WITHOUT_PEOPLE)


def check_countersign_url(problems: list[str], url: str) -> None:
    """The bot the stdio relay and the hook talk to."""
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        problems.append(COUNTERSIGN_URL_FORMAT.format(given=url))


@dataclass(frozen=True, kw_only=True)
class ClientSettings:
    """What ``python -m bot gateway --stdio`` and ``python -m bot hook claude-code`` read: the
    bot to talk to and the person's token (nothing else: they run where the bot does not)."""

    url: str
    """``COUNTERSIGN_URL``."""
    token: str | None
    """``COUNTERSIGN_TOKEN``."""
    problems: tuple[str, ...] = ()
    """What is wrong with them (reported by the command: the hook denies, saying so)."""


def client_settings(environ: Mapping[str, str] | None = None) -> ClientSettings:
    """``COUNTERSIGN_URL`` and ``COUNTERSIGN_TOKEN`` alone, with their problems."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    url = (env.get("COUNTERSIGN_URL", "").strip() or DEFAULT_COUNTERSIGN_URL).rstrip("/")
    check_countersign_url(problems, url)
    token = env.get("COUNTERSIGN_TOKEN", "").strip() or None
    return ClientSettings(url=url, token=token, problems=tuple(problems))
