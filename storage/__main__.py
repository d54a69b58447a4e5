"""``python -m storage upgrade [--url URL]``: apply the SQL schema migrations.

The URL defaults to ``STORAGE_URL``, else ``sqlite+aiosqlite:///./data/countersign.db``.
Redis and in-memory storage have no schema; for them the command only says so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from storage._errors import StorageError
from storage._factory import DEFAULT_STORAGE_URL


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m storage", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    upgrade = commands.add_parser("upgrade", help="migrate the SQL schema to the newest revision")
    upgrade.add_argument(
        "--url",
        default=os.environ.get("STORAGE_URL") or DEFAULT_STORAGE_URL,
        help="storage URL (default: $STORAGE_URL, else %(default)s)",
    )
    args = parser.parse_args(argv)
    try:
        print(asyncio.run(_upgrade(args.url)))
    except StorageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


async def _upgrade(url: str) -> str:
    scheme = url.split("://", 1)[0]
    if not scheme.startswith(("sqlite", "postgresql")):
        return f"{scheme}:// storage has no schema to migrate"
    from storage._sql import SQLStorage

    store = SQLStorage(url)
    try:
        revision = await store.migrate()
    finally:
        await store.close()
    shown = store.engine.url.render_as_string(hide_password=True)
    return f"{shown} is at schema revision {revision}"


if __name__ == "__main__":
    raise SystemExit(main())
