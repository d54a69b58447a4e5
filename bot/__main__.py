"""``python -m bot`` / ``countersign``: serve the agent in Slack (SPEC 6, 8)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from bot._errors import BotConfigError, BotError
from bot._logs import configure_logging
from bot._serve import serve_forever
from bot._settings import describe_variables, load_settings, logging_settings


def _parser() -> argparse.ArgumentParser:
    rows = describe_variables()
    width = max(len(name) for name, _, _ in rows)
    listed = "\n".join(
        f"  {name:<{width}}  {what} (default: {default})" for name, default, what in rows
    )
    return argparse.ArgumentParser(
        prog="countersign",
        description=(
            "Serve the agent in Slack: HTTP mode with SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET, "
            "Socket Mode with SLACK_APP_TOKEN too, the local workspace with no Slack token. "
            "Configured by environment variables only."
        ),
        epilog=f"environment variables:\n{listed}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


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
