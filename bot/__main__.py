"""``python -m bot`` / ``countersign``: serve the agent in Slack (SPEC 6, 8)."""

from __future__ import annotations

import asyncio
import sys

from bot._errors import BotConfigError, BotError
from bot._logs import configure_logging
from bot._serve import serve_forever
from bot._settings import load_settings


def main() -> int:
    """Read the configuration, start the bot, serve until stopped; non-zero on a bad setup."""
    try:
        settings = load_settings()
        configure_logging(settings.log_level)
        asyncio.run(serve_forever(settings))
    except BotConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    except BotError as exc:
        print(f"countersign cannot start: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
