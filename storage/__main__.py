"""``python -m storage``: operate a store from the command line.

``upgrade [--url URL]`` applies the SQL schema migrations (Redis and in-memory storage have no
schema; for them the command only says so). ``prune --older-than DURATION [--audit] [--url
URL]`` deletes what finished runs left behind before now minus DURATION (``90s``, ``15m``,
``12h``, ``30d``; ``0d``: everything finished so far), and the standing grants that expired,
were revoked or were used up before it, and prints how many of each kind went;
pending runs, claims still in flight, memory threads and the outbox are never touched, audit
events only with ``--audit`` (card records go with their ended runs, never with audit). The
URL defaults to ``STORAGE_URL``, else ``sqlite+aiosqlite:///./data/countersign.db``. Errors
are one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Sequence
from datetime import timedelta

from storage._errors import StorageError
from storage._factory import DEFAULT_STORAGE_URL, create_storage
from storage._prune import PruneReport
from storage._records import utcnow

DURATION_FORMAT = "a whole number followed by s, m, h or d (90s, 15m, 12h, 30d; 0d allowed)"
"""What ``--older-than`` accepts, as the error message says it."""

_DURATION = re.compile(r"(\d{1,9})([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_LONGEST = timedelta(days=36500)


def parse_duration(text: str) -> timedelta:
    """``"30d"`` → 30 days; ``ValueError`` naming the format for anything else."""
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"--older-than {text!r} is not a duration: use {DURATION_FORMAT}")
    age = timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
    if age > _LONGEST:
        raise ValueError(f"--older-than {text!r} reaches back too far: at most 36500d")
    return age


def describe(report: PruneReport) -> str:
    """The one line ``prune`` prints."""
    return (
        f"pruned {report.claims} claims, {report.approvals} approvals, "
        f"{report.snapshots} failed-run snapshots, {report.cards} card records, "
        f"{report.audit_events} audit events, {report.values} expired values, "
        f"{report.escalations} escalation steps, {report.grants} ended grants"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m storage", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    url_help = "storage URL (default: $STORAGE_URL, else %(default)s)"
    default_url = os.environ.get("STORAGE_URL") or DEFAULT_STORAGE_URL
    commands = parser.add_subparsers(dest="command", required=True)
    upgrade = commands.add_parser("upgrade", help="migrate the SQL schema to the newest revision")
    upgrade.add_argument("--url", default=default_url, help=url_help)
    prune = commands.add_parser(
        "prune", help="delete finished runs' claims, ended grants (and old audit with --audit)"
    )
    prune.add_argument(
        "--older-than", required=True, metavar="DURATION", help=f"age cutoff: {DURATION_FORMAT}"
    )
    prune.add_argument("--audit", action="store_true", help="also delete older audit events")
    prune.add_argument("--url", default=default_url, help=url_help)
    args = parser.parse_args(argv)
    try:
        if args.command == "upgrade":
            print(asyncio.run(_upgrade(args.url)))
        else:
            age = parse_duration(args.older_than)
            print(describe(asyncio.run(_prune(args.url, age, audit=args.audit))))
    except (StorageError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


async def _upgrade(url: str) -> str:
    scheme = url.split("://", 1)[0]
    if not scheme.startswith(("sqlite", "postgresql")):
        return f"{scheme}:// storage has no schema to migrate"
    from storage.sql._storage import SQLStorage

    store = SQLStorage(url)
    try:
        revision = await store.migrate()
    finally:
        await store.close()
    shown = store.engine.url.render_as_string(hide_password=True)
    return f"{shown} is at schema revision {revision}"


async def _prune(url: str, age: timedelta, *, audit: bool) -> PruneReport:
    store = create_storage(url)
    try:
        return await store.prune(before=utcnow() - age, audit=audit)
    finally:
        await store.close()


if __name__ == "__main__":
    raise SystemExit(main())
