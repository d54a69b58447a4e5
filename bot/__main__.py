"""``python -m bot`` / ``countersign``: serve the agent in Slack (SPEC 6, 8), and the gateway's
commands (SPEC 17):

- ``python -m bot``: the bot (with the gateway when ``GATEWAY=true``, or in the local
  workspace);
- ``python -m bot gateway``: the bot with the gateway on (MCP clients at ``/mcp``);
  ``--stdio``: a thin relay from a client that starts a command to a running bot's ``/mcp``;
- ``python -m bot hook claude-code``: Claude Code's ``PreToolUse`` hook (``--wait SECONDS``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import sys
import textwrap
from collections.abc import Sequence

from bot._errors import BotConfigError, BotError
from bot._settings_checks import client_settings
from bot.gateway._hook import DEFAULT_WAIT_SECONDS, hook_output, run_hook

HELP_WIDTH = 100
"""The widest ``--help`` line (narrower on a narrower terminal)."""


def _parser() -> argparse.ArgumentParser:
    from bot._settings import describe_variables  # here: the hook's command imports little

    width = max(60, min(shutil.get_terminal_size().columns, HELP_WIDTH)) - 2
    rows = describe_variables()
    name_width = max(len(name) for name, _, _ in rows)
    listed = "\n".join(
        _variable(name, default, what, name_width, width) for name, default, what in rows
    )
    description = (
        "Serve the agent in Slack: HTTP mode with SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET, "
        "Socket Mode with SLACK_APP_TOKEN too, the local workspace with no Slack token. "
        "Configured by environment variables only."
    )
    commands = f"commands (each has --help):\n  gateway   {GATEWAY_HELP}\n  hook      {HOOK_HELP}"
    return argparse.ArgumentParser(
        prog="countersign",
        usage="%(prog)s [-h] | gateway [--stdio] | hook claude-code [--wait SECONDS]",
        description=f"{textwrap.fill(description, width)}\n\n{commands}",
        epilog=f"environment variables (unset unless a default is shown):\n{listed}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _variable(name: str, default: str | None, what: str, name_width: int, width: int) -> str:
    """One variable's entry: its name, what it does wrapped beside it, the default kept whole."""
    indent = " " * (name_width + 4)
    lines = textwrap.wrap(what, width - len(indent), break_on_hyphens=False)
    if default is not None:
        shown = f"(default: {default})"
        if len(lines[-1]) + 1 + len(shown) <= width - len(indent):
            lines[-1] = f"{lines[-1]} {shown}"
        else:
            lines.append(shown)
    head = f"  {name:<{name_width}}  "
    return "\n".join((head if i == 0 else indent) + line for i, line in enumerate(lines))


GATEWAY_HELP = "serve the bot with the gateway on: MCP clients connect to /mcp (GATEWAY=true)"
GATEWAY_DESCRIPTION = (
    "Serve the bot with the gateway on (GATEWAY=true): MCP clients connect to "
    "http://HOST:PORT/mcp with their own token from API_TOKENS. With --stdio, relay a client "
    "that starts a command to a running bot (COUNTERSIGN_URL, COUNTERSIGN_TOKEN)."
)


def _gateway_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="countersign gateway", description=GATEWAY_DESCRIPTION)
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="speak MCP on stdin/stdout and relay it to COUNTERSIGN_URL's /mcp",
    )
    return parser


HOOK_HELP = "answer a coding agent's hook (claude-code: its PreToolUse hook)"
HOOK_DESCRIPTION = (
    "Read a PreToolUse hook's JSON on stdin, ask the bot (COUNTERSIGN_URL, COUNTERSIGN_TOKEN) "
    "and print allow or deny; always exits 0 (denies when the bot cannot be reached)."
)


def _hook_parser() -> argparse.ArgumentParser:
    """``hook``'s own arguments (parsed without building the whole parser: it is fast)."""
    parser = argparse.ArgumentParser(prog="countersign hook", description=HOOK_DESCRIPTION)
    return _hook_arguments(parser)


def _hook_arguments(hook: argparse.ArgumentParser) -> argparse.ArgumentParser:
    hook.add_argument("client", choices=["claude-code"], help="the coding agent")
    hook.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT_SECONDS,
        metavar="SECONDS",
        help=f"how long to wait for a decision (default {DEFAULT_WAIT_SECONDS:g})",
    )
    return hook


def _report(problem: str, log_format: str) -> None:
    """A start-up problem: as printed text, or as one JSON log line with ``LOG_FORMAT=json``."""
    if log_format == "json":
        logging.getLogger("bot").error("%s", problem)
    else:
        print(problem, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Read the configuration, start the bot (or run a gateway command); non-zero on a bad
    setup (the hook always exits 0).

    ``--help`` lists every environment variable with its default; any other argument is an
    error (exit 2), never ignored.
    """
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["hook"]:
        return _hook(_hook_parser().parse_args(given[1:]).wait)
    command = given[0] if given[:1] == ["gateway"] else None
    if command is not None:
        stdio = _gateway_parser().parse_args(given[1:]).stdio
    else:
        _parser().parse_args(given)
        stdio = False
    from bot._logs import configure_logging
    from bot._serve import serve_forever
    from bot._settings import load_settings, logging_settings

    level, log_format = logging_settings()
    configure_logging(level, log_format)  # before BOT_AGENT is imported: its warnings too
    try:
        if stdio:
            from bot.gateway import relay_stdio  # the MCP SDK: only for the relay

            client = client_settings()
            if client.problems:
                raise BotConfigError(list(client.problems))
            asyncio.run(relay_stdio(client.url, client.token))
            return 0
        overrides = {"GATEWAY": "true"} if command == "gateway" else None
        settings = load_settings(overrides=overrides)
        configure_logging(settings.log_level, settings.log_format)
        asyncio.run(serve_forever(settings))
    except BotConfigError as exc:
        _report(str(exc), log_format)
        return 2
    except BotError as exc:
        _report(f"countersign cannot start: {exc}", log_format)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


def _hook(wait_seconds: float) -> int:
    """The hook's one line on stdout; exit 0 whatever happened (a deny says what)."""
    client = client_settings()
    if client.problems:
        print(json.dumps(hook_output("deny", "countersign: " + "; ".join(client.problems))))
        return 0
    print(run_hook(sys.stdin.read(), url=client.url, token=client.token, wait_seconds=wait_seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
