"""``python -m bench [all|cycle|list|clicks|home|memory|peers|policy|gateway|sweep|scale]``: a JSON
line per figure (SPEC 9).

Figures:
  cycle   per storage URL: suspend → persist → new Agent → approve → finish with a scripted
          model: median_ms, p99_ms, cycles_per_s; snapshot_bytes per pending call;
          floor_median_ms and ratio_to_floor (a raw-store floor timed in the same run);
          statements/transactions/commits_per_cycle (SQL; PostgreSQL also round_trips_per_cycle)
          or redis_commands/round_trips_per_cycle;
          concurrent_cycles_per_s with --in-flight cycles (default 100) at once, and failures;
          on a SQLite file also nondurable_median_ms, fsync_median_ms (one sync of a growing
          log-like file) and claim_cost_ratio (what the durable claim adds, in those syncs),
          claim_cost_ratio_to_log_sync, claim_cost_ratio_in_cycle (against a plain sync at the
          claim) and claim_alone_ratio (the claim's commit alone against one sync of its own
          log); goal for each: at most 1.5
  list    list_suspended_runs with --runs stored runs (one page, one thread)
  clicks  p50/p99 Slack click-to-ack time under concurrent clicks against the real bot
  home    the App Home tab with --pending approvals waiting (default 10,000) against the real
          bot: publish_median_ms / publish_max_ms (app_home_opened to views.publish),
          publish_nothing_ms (a viewer who may decide none: the bounded scan),
          slack_calls_per_publish, and slack_calls_per_decision with --viewers approvers' and
          --onlookers' Home tabs open (home_publishes_per_decision: one per approver, none for
          an onlooker, whose view a decision cannot change)
  memory  process memory (RSS) with --pending-small then --pending-large runs waiting for
          approval on one store: rss_small_mb, rss_large_mb, growth (should stay near 0)
  peers   the cycle for LangGraph, the OpenAI Agents SDK and Pydantic AI (own venv), each with
          median_ms, floor_median_ms, ratio_to_floor (own floor, own process) and
          ratio_vs_countersign, per storage class (memory, SQLite file)
  policy  a policy file of --rules rules (default 20,000): start_ms (read_ms + compile_ms, as
          at start-up) and match_median_us / match_p99_us / match_max_us over --calls calls
  sweep   one pass of the bot's periodic sweep with --sweep-sizes pending calls (default
          1,000 and 10,000; 10 due per pass): pass_median_ms per size, rss_mb, and each one's
          growth exponent (log10 of the ratio per 10x: 0 is flat); --storage (default: a fresh
          SQLite file per size)
  scale   growth curves in one run (issue 35), one line per curve at --scale-sizes (default
          1,000, 10,000 and 100,000 when it fits in --budget-s, default 600): points, growth
          exponent, goal, ok. redis_grants (the gate's grant lookup among that many grants,
          --redis or TEST_REDIS_URL), sweep, rss_pending and startup_cpu (python -m bot on a
          store with that many pending), home_publishes (views.publish per decision, a tenth
          of that many people with Home open), policy_start (that many rules), click_ack
          (p50/p99 with --clicks-in-flight, default 1,000, on one instance). Not part of
          ``all``: it takes 10 minutes or more on 2 cores
  gateway python -m bot gateway in front of an upstream MCP server (Streamable HTTP), the
          official Python client: a call it does not hold, direct vs through the gateway in
          the same run (direct_median_ms, gateway_median_ms, ratio, added_ms; goal: ratio
          under 1.3 or under 2 ms added), and --held calls held and approved the moment their
          card is posted (held_median_ms)

python -m bench                                   # every figure, defaults below
python -m bench cycle --storage sqlite+aiosqlite:///bench.db --cycles 200 --in-flight 100
python -m bench cycle --storage 'postgresql+asyncpg://postgres@127.0.0.1/test?schema=bench'
python -m bench cycle --storage 'redis://127.0.0.1:6379/14?key_prefix=bench:'
python -m bench list --storage postgresql+asyncpg://postgres@127.0.0.1/test --runs 100000
python -m bench clicks --cards 50 --per-card 3 --concurrency 50
python -m bench home --pending 10000 --viewers 3
python -m bench memory --storage sqlite+aiosqlite:///./data/bench-memory.db
python -m bench peers --cycles 200
python -m bench policy --rules 20000 --calls 2000
python -m bench gateway --gateway-calls 200 --held 20
python -m bench sweep --sweep-sizes 1000,10000,100000
python -m bench scale --scale-sizes 1000,10000,100000 --budget-s 1800
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Callable, Coroutine, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from bench._clicks import run_clicks
from bench._cycle import run_cycles
from bench._gateway import run_gateway
from bench._home import run_home
from bench._listing import run_listing
from bench._memory import run_memory
from bench._peers import run_peers
from bench._policy import run_policy
from bench._scale import run_scale
from bench._sweep import run_sweep

SQLITE = "sqlite+aiosqlite:///./data/bench.db"
CYCLE_STORAGES = ["memory://", SQLITE]
"""``cycle`` (and ``all``) without ``--storage``."""
MEMORY_STORAGE = "sqlite+aiosqlite:///./data/bench-memory.db"
"""``memory`` without ``--storage``: the pending runs pile up in this file."""
LIST_STORAGES = [SQLITE]
"""``list`` (and ``all``) without ``--list-storage``: one backend, 100k runs kept in the file."""
FIGURES = (
    "all",
    "cycle",
    "list",
    "clicks",
    "home",
    "memory",
    "peers",
    "policy",
    "gateway",
    "sweep",
    "scale",
)


def _once(figure: Coroutine[Any, Any, dict[str, Any]]) -> list[dict[str, Any]]:
    return [asyncio.run(figure)]


def _report(name: str, figures: Callable[[], Iterable[dict[str, Any]]]) -> bool:
    """Print each JSON line of one figure; a failure is printed as ``{"error": ...}``.

    False when the figure raised or one of its lines carries an ``error`` (failed cycles, a peer
    that could not run): the line is printed all the same.
    """
    ok = True
    try:
        for figure in figures():
            print(json.dumps(figure), flush=True)
            ok &= "error" not in figure
    except Exception as exc:
        print(json.dumps({"figure": name, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return False
    return ok


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="figure", required=True)
    every = sub.add_parser("all", help="every figure (the default)")
    cycle = sub.add_parser(
        "cycle",
        help="suspend → persist → new Agent → approve → finish: time, floor, statements, "
        "concurrent cycles/s",
    )
    listing = sub.add_parser("list", help="list_suspended_runs with many stored runs")
    clicks = sub.add_parser("clicks", help="Slack click-to-ack time under concurrent clicks")
    home = sub.add_parser("home", help="App Home publish time and Slack calls, many pending")
    for command in (every, home):
        command.add_argument("--pending", type=int, default=10_000, help="pending approvals")
        command.add_argument("--viewers", type=int, default=3, help="approvers with Home open")
        command.add_argument(
            "--onlookers", type=int, default=10, help="people with Home open who decide nothing"
        )
    memory = sub.add_parser("memory", help="process memory as pending runs pile up")
    memory.add_argument("--storage", default=MEMORY_STORAGE, help="storage URL")
    every.add_argument("--memory-storage", default=MEMORY_STORAGE, help="storage URL for memory")
    for command in (every, memory):
        command.add_argument("--pending-small", type=int, default=1_000)
        command.add_argument("--pending-large", type=int, default=10_000)
    peers = sub.add_parser(
        "peers", help="the cycle for LangGraph, the OpenAI Agents SDK and Pydantic AI"
    )
    for command in (every, cycle):
        command.add_argument("--storage", action="append", help="storage URL (repeatable)")
    for command in (every, cycle, peers):
        command.add_argument("--cycles", type=int, default=200)
    for command in (every, cycle):
        command.add_argument(
            "--in-flight", type=int, default=100, help="concurrent cycles (0: skip that part)"
        )
    listing.add_argument("--storage", action="append", help="storage URL (repeatable)")
    every.add_argument("--list-storage", action="append", help="storage URL for list")
    for command in (every, listing):
        command.add_argument("--runs", type=int, default=100_000)
    clicks.add_argument("--storage", default="memory://", help="the bot's STORAGE_URL")
    every.add_argument("--clicks-storage", default="memory://", help="the bot's STORAGE_URL")
    for command in (every, clicks):
        command.add_argument("--cards", type=int, default=50, help="pending approvals")
        command.add_argument("--per-card", type=int, default=3, help="clicks on each card")
        command.add_argument("--concurrency", type=int, default=50, help="clicks in flight")
    for command in (every, peers):
        command.add_argument("--data-dir", type=Path, default=Path("data"), help="SQLite files")
    policy = sub.add_parser("policy", help="start-up and match time of a large policy file")
    for command in (every, policy):
        command.add_argument("--rules", type=int, default=20_000, help="rules in the file")
        command.add_argument("--calls", type=int, default=2_000, help="calls matched")
    gateway = sub.add_parser("gateway", help="the gateway's overhead, and a held call's path")
    for command in (every, gateway):
        command.add_argument(
            "--gateway-calls", type=int, default=200, help="calls not held, each way"
        )
        command.add_argument("--held", type=int, default=20, help="held calls, approved at once")
    sweep_figure = sub.add_parser("sweep", help="one sweep pass as pending calls pile up")
    sweep_figure.add_argument("--storage", default=None, help="storage URL (default: SQLite)")
    for command in (every, sweep_figure):
        command.add_argument(
            "--sweep-sizes", default="1000,10000", help="pending calls, comma separated"
        )
    scale = sub.add_parser("scale", help="growth curves at 1k/10k/100k, one line per curve")
    scale.add_argument("--scale-sizes", default="1000,10000,100000", help="comma separated")
    scale.add_argument(
        "--budget-s", type=float, default=600.0, help="seconds; decides the points past two"
    )
    scale.add_argument("--redis", default=None, help="Redis URL (default: TEST_REDIS_URL)")
    scale.add_argument("--clicks-in-flight", type=int, default=1_000, help="clicks at once")
    scale.add_argument("--curves", default=None, help="comma separated (default: every one)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the figures; 1 when one of them failed (its line says why), else 0."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in FIGURES and argv[0] not in ("-h", "--help")):
        argv.insert(0, "all")
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    chosen = args.figure
    ok = True
    if chosen in ("all", "cycle"):
        for url in args.storage or CYCLE_STORAGES:
            ok &= _report(
                "cycle", partial(_once, run_cycles(url, args.cycles, in_flight=args.in_flight))
            )
    if chosen in ("all", "list"):
        urls = args.storage if chosen == "list" else args.list_storage
        for url in urls or LIST_STORAGES:
            ok &= _report("list_suspended_runs", partial(_once, run_listing(url, args.runs)))
    if chosen in ("all", "clicks"):
        url = args.storage if chosen == "clicks" else args.clicks_storage
        options = {"cards": args.cards, "per_card": args.per_card, "concurrency": args.concurrency}
        ok &= _report("clicks", partial(_once, run_clicks(url, **options)))
    if chosen in ("all", "home"):
        figure = run_home(args.pending, viewers=args.viewers, onlookers=args.onlookers)
        ok &= _report("home", partial(_once, figure))
    if chosen in ("all", "memory"):
        url = args.storage if chosen == "memory" else args.memory_storage
        figure = run_memory(url, args.pending_small, args.pending_large)
        ok &= _report("memory", partial(_once, figure))
    if chosen in ("all", "peers"):
        ok &= _report("peers", partial(run_peers, cycles=args.cycles, data_dir=args.data_dir))
    if chosen in ("all", "policy"):
        ok &= _report("policy", lambda: [run_policy(args.rules, args.calls)])
    if chosen in ("all", "gateway"):
        figure = run_gateway(args.gateway_calls, args.held)
        ok &= _report("gateway", partial(_once, figure))
    if chosen in ("all", "sweep"):
        sizes = tuple(int(size) for size in args.sweep_sizes.split(","))
        url = args.storage if chosen == "sweep" else None
        ok &= _report("sweep", partial(_once, run_sweep(url, sizes)))
    if chosen == "scale":  # not in ``all``: 10 minutes or more
        sizes_list = [int(size) for size in args.scale_sizes.split(",")]
        curves = partial(
            run_scale,
            sizes_list,
            budget_s=args.budget_s,
            redis_url=args.redis,
            in_flight=args.clicks_in_flight,
            curves=set(args.curves.split(",")) if args.curves else None,
        )
        ok &= _report("scale", curves)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
