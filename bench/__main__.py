"""``python -m bench cycle --storage URL [--cycles N]``: one JSON line per figure."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging

from bench._cycle import run_cycles


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="figure", required=True)
    cycle = sub.add_parser("cycle", help="suspend → persist → new Agent → approve → finish")
    cycle.add_argument("--storage", action="append", default=None, help="storage URL (repeatable)")
    cycle.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    if args.figure == "cycle":
        for url in args.storage or ["memory://"]:
            print(json.dumps(asyncio.run(run_cycles(url, args.cycles))), flush=True)


if __name__ == "__main__":
    main()
