"""``python -m bot`` / ``countersign``: serve the agent in Slack (SPEC 6, 8)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import textwrap
from collections.abc import Sequence

from bot._errors import BotConfigError, BotError
from bot._logs import configure_logging
from bot._serve import serve_forever
from bot._settings import describe_variables, load_settings, logging_settings

HELP_WIDTH = 100
"""The widest ``--help`` line (narrower on a narrower terminal)."""


def _parser() -> argparse.ArgumentParser:
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
    return argparse.ArgumentParser(
        prog="countersign",
        description=textwrap.fill(description, width),
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


def _report(problem: str, log_format: str) -> None:
    """A start-up problem: as printed text, or as one JSON log line with ``LOG_FORMAT=json``."""
    if log_format == "json":
        logging.getLogger("bot").error("%s", problem)
    else:
        print(problem, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Read the configuration, start the bot, serve until stopped; non-zero on a bad setup.

    ``--help`` lists every environment variable with its default; any other argument is an
    error (exit 2), never ignored.
    """
    _parser().parse_args(sys.argv[1:] if argv is None else argv)
    level, log_format = logging_settings()
    configure_logging(level, log_format)  # before BOT_AGENT is imported: its warnings too
    try:
        settings = load_settings()
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


if __name__ == "__main__":
    sys.exit(main())
