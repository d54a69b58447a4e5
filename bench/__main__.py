"""``python -m bench cycle|list --storage URL``: one JSON line per figure.

python -m bench cycle --storage sqlite+aiosqlite:///bench.db --cycles 200
python -m bench list --storage postgresql+asyncpg://postgres@127.0.0.1/test --runs 100000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging

from bench._cycle import run_cycles
from bench._listing import run_listing


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="figure", required=True)
    cycle = sub.add_parser("cycle", help="suspend → persist → new Agent → approve → finish")
    cycle.add_argument("--storage", action="append", default=None, help="storage URL (repeatable)")
    cycle.add_argument("--cycles", type=int, default=200)
    listing = sub.add_parser("list", help="list_suspended_runs with many stored runs")
    listing.add_argument(
        "--storage", action="append", default=None, help="storage URL (repeatable)"
    )
    listing.add_argument("--runs", type=int, default=100_000)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    if args.figure == "cycle":
        for url in args.storage or ["memory://"]:
            print(json.dumps(asyncio.run(run_cycles(url, args.cycles))), flush=True)
    if args.figure == "list":
        for url in args.storage or ["memory://"]:
            print(json.dumps(asyncio.run(run_listing(url, args.runs))), flush=True)


if __name__ == "__main__":
    main()
