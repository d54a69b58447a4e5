"""Benchmarks: ``python -m bench`` prints one JSON line per figure (SPEC 9).

Figures (``python -m bench <figure>``; no argument or ``all`` runs every one):

- ``cycle``: one suspend → persist → new ``Agent`` → approve → finish cycle with
  ``ScriptedModel`` (framework overhead only), per storage: median, p99, cycles/s, the snapshot
  bytes of the pending call, the raw-store floor timed in the same run (``floor_median_ms``,
  ``ratio_to_floor``), SQL statements / transactions / commits or Redis commands / round trips
  per cycle, and ``concurrent_cycles_per_s`` with ``--in-flight 100`` cycles at once (failures
  counted). Default ``memory://`` and ``sqlite+aiosqlite:///./data/bench.db``; ``--storage URL``
  (repeatable) for PostgreSQL/Redis; ``--cycles 200``. See ``bench._cycle``.
- ``list``: ``list_suspended_runs`` over ``--runs 100000`` stored runs: one page, and one thread.
  Default: SQLite only (``./data/bench.db``); the runs are kept in the file, so only the first
  run pays the fill (several minutes on 2 cores; ``fill_s`` says how long). ``--storage URL`` for
  other backends (``all``: ``--list-storage URL``).
- ``clicks``: p50/p99 of the Slack click-to-ack time (signed POST → HTTP response) against the
  real bot (``python -m bot`` in its own process, a fake Web API here), with ``--cards 50``
  pending approvals clicked ``--per-card 3`` times each, ``--concurrency 50`` clicks in flight;
  also checks that each card's tool ran exactly once and every loser was told. See
  ``bench._clicks``.
- ``peers``: the ``cycle`` for LangGraph, the OpenAI Agents SDK and Pydantic AI, run in the same
  run in their own virtual environment (``.venv-peers``, created on first use: needs PyPI once),
  on in-memory and SQLite-file storage, one line per framework with, per storage class, the
  median, the raw-store floor measured in that framework's own process and ``ratio_to_floor``,
  plus ``ratio_vs_countersign`` (their median over ours). See ``bench._peers`` and the scripts
  in ``bench/peers/``.
- ``policy``: a generated policy file of ``--rules 20000`` rules (literal tools, ``prefix_*``,
  ``*_suffix``, ``?`` and ``[...]`` globs, agent globs, ``args_above``) read, validated and
  compiled as at start-up (``start_ms`` = ``read_ms`` + ``compile_ms``), then ``--calls 2000``
  calls matched one by one (``match_median_us``, ``match_p99_us``, ``match_max_us``; ``matched``
  counts the calls some rule matched), timed by ``python -m bot.policy FILE --time`` in its own
  process. See ``bench._policy``.
- ``scale``: growth curves in one run, one line per curve with its ``exponent`` (log10 of the
  growth per 10x) at ``--scale-sizes 1000,10000,100000`` within ``--budget-s 600``: Redis grant
  matching, the sweep, the bot's RSS and start-up CPU with that many pending, Home publishes per
  decision, policy start, click → ack with ``--clicks-in-flight 1000``. Not in ``all`` (about 10
  minutes on 2 cores). See ``bench._scale``.

With the defaults, ``python -m bench`` takes a few minutes on 2 cores (plus the one-time fill of
100k runs and the one-time peers install). A figure that fails prints ``{"figure": ...,
"error": ...}`` (or a line with an ``error`` field: failed concurrent cycles, a peer that did not
run) and the others still run; the exit status is then 1.
"""
