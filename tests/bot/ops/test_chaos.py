"""Chaos, in the spirit of DBOS's and Jepsen's tests: three ``python -m bot`` instances on one
PostgreSQL and one Redis of the test's own, a seeded schedule of SIGKILL, SIGSTOP/SIGCONT,
PostgreSQL restarts, Redis restarts and Slack answering 5xx, while a stream of mentions and
clicks runs (double clicks on two instances at once, two-person approvals, declines, requests
nobody decides). Afterwards every fault is healed, the people click again what they meant to
decide and got no answer for, and the invariants are checked over everything recorded:

- every non-idempotent call ran at most once;
- every approved call ran or was reported interrupted;
- no declined or still pending call ran;
- every thread shows exactly one outcome for its call, and it agrees with the card;
- no decided card still has buttons;
- the Slack side, checked at the end of every seed: every decided call's card shows its outcome
  in its header (approved, interrupted, declined: the one its answer says), and its thread holds
  exactly one card (a result) and one answer.

The seed is printed first, so a failure can be replayed: ``CHAOS_SEEDS=17 pytest -m chaos``.
A short seed set runs by default (and in CI); ``CHAOS_SEEDS=1-20`` runs a long one.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import aiohttp
import pytest

from storage import Storage, create_storage
from tests.bot.harness import CHANNEL, TEAM, click_payload
from tests.bot.ops.chaos_fleet import Fleet, Instance, SlackDelivery, bot_env
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.own_servers import OwnPostgres, OwnRedis, postgres_bin

pytestmark = [
    pytest.mark.chaos,
    pytest.mark.slow,
    pytest.mark.skipif(
        postgres_bin() is None or shutil.which("redis-server") is None,
        reason="needs PostgreSQL's initdb and redis-server",
    ),
]
LEASE_SECONDS = 2
STEPS = 26
"""Operations per seed (mentions, clicks, faults), about half a second apart."""
ASK_AGAIN_AFTER = 15.0
"""Seconds a person waits for any answer before asking again."""
DEFAULT_SEEDS = "22,23"
"""The short set run by default (CI), about a minute each: 22 and 23 found a decided call's
answer lost through a storage outage and through a kill while the model answered (both fixed;
seeds 1-8 pass too). ``CHAOS_SEEDS=1-30`` runs a long one."""
Intent = Literal["approve", "decline", "leave"]
NOT_ACTIONS = frozenset({"section", "context", "header", "divider", "rich_text"})


def _seeds() -> list[int]:
    spec = os.environ.get("CHAOS_SEEDS", DEFAULT_SEEDS)
    seeds: list[int] = []
    for part in filter(None, spec.split(",")):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


@dataclass
class Thread:
    """One request: a mention asking for one gated call, and what its people mean to do."""

    ts: str
    record: str
    word: str
    intent: Intent
    asked: int = 1
    """How many times the person asked (again when nothing at all came back)."""
    cardless_since: float | None = None
    """When the settling phase first saw it without a card (``time.monotonic``)."""


@dataclass
class World:
    slack: FakeSlackAPI
    fleet: Fleet
    delivery: SlackDelivery
    postgres: OwnPostgres
    redis: OwnRedis
    http: aiohttp.ClientSession
    rng: random.Random
    executions: Path
    threads: list[Thread] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    background: list[asyncio.Task[None]] = field(default_factory=list)
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def lock(self, what: str) -> asyncio.Lock:
        """One fault at a time on one thing (a server restart while it restarts is no test)."""
        return self.locks.setdefault(what, asyncio.Lock())

    def messages(self, thread: Thread) -> list[PostedMessage]:
        return self.slack.thread(CHANNEL, thread.ts)

    def card(self, thread: Thread) -> PostedMessage | None:
        cards = self.cards(thread)
        return cards[0] if cards else None

    def cards(self, thread: Thread) -> list[PostedMessage]:
        return [m for m in self.messages(thread) if m.blocks and _is_card(m)]

    def answers(self, thread: Thread) -> list[str]:
        return [
            m.text
            for m in self.messages(thread)
            if not m.blocks and m.text.startswith(("Done ", "Not done "))
        ]


def _is_card(message: PostedMessage) -> bool:
    return any(b.get("type") == "header" for b in message.blocks)


def _live_buttons(message: PostedMessage) -> bool:
    return any(b.get("type") == "actions" for b in message.blocks)


def _header(message: PostedMessage) -> str:
    for block in message.blocks:
        if block.get("type") == "header":
            return str(block.get("text", {}).get("text", ""))
    return ""


# -- what people do ---------------------------------------------------------------------------
async def _mention(world: World, n: int) -> None:
    word = world.rng.choice(["delete", "delete", "label", "refund"])
    intent: Intent = world.rng.choice(["approve", "approve", "approve", "decline", "leave"])
    ts = f"{int(time.time())}.{n:06d}"
    thread = Thread(ts=ts, record=f"r{n}", word=word, intent=intent)
    world.threads.append(thread)
    await _ask(world, thread, ts=ts, event_id=f"Ev{n}")


async def _ask(world: World, thread: Thread, *, ts: str, event_id: str) -> None:
    event = {
        "type": "app_mention",
        "user": "U1",
        "text": f"<@UBOT> {thread.word} {thread.record}",
        "ts": ts,
        "channel": CHANNEL,
        "team": TEAM,
        "event_ts": ts,
        **({"thread_ts": thread.ts} if ts != thread.ts else {}),
    }
    envelope = {"type": "event_callback", "team_id": TEAM, "event_id": event_id, "event": event}
    await world.delivery.event(envelope)


async def _decide(world: World, thread: Thread, *, double: bool = False) -> None:
    """Click what ``thread``'s people mean to (both people for a two-person rule)."""
    card = world.card(thread)
    if card is None or not _live_buttons(card) or thread.intent == "leave":
        return
    if thread.intent == "decline":
        await _decline(world, thread, card)
        return
    people = ["U2", "U3"] if thread.word == "refund" else ["U2"]
    for person in people:
        payload = click_payload(card, "approval:approve", user=person)
        clicks = [world.delivery.interaction(payload)]
        if double:  # the same click arriving at two instances at once
            clicks.append(world.delivery.interaction(payload))
        await asyncio.gather(*clicks)


async def _decline(world: World, thread: Thread, card: PostedMessage) -> None:
    trigger = f"trigger-{thread.record}-{world.rng.randrange(10**9)}"
    payload = {**click_payload(card, "approval:decline", user="U2"), "trigger_id": trigger}
    if await world.delivery.interaction(payload) != 200:
        return
    for _ in range(100):
        opened = [c for c in world.slack.calls_to("views.open") if c.get("trigger_id") == trigger]
        if opened:
            break
        await asyncio.sleep(0.05)
    else:
        return
    view = opened[0]["view"]
    submit = {
        "type": "view_submission",
        "team": {"id": TEAM, "domain": "test"},
        "user": {"id": "U2", "username": "u2", "team_id": TEAM},
        "api_app_id": "A1",
        "trigger_id": f"{trigger}-submit",
        "view": {
            "id": "V1",
            "type": "modal",
            "team_id": TEAM,
            "callback_id": view["callback_id"],
            "private_metadata": view.get("private_metadata", ""),
            "blocks": view.get("blocks", []),
            "state": {"values": {}},
            "hash": "h1",
        },
    }
    await world.delivery.interaction(submit)


# -- what goes wrong --------------------------------------------------------------------------
def _target(world: World) -> Instance:
    """Mostly an instance in the middle of a tool call (what a fault there must not break)."""
    lines = world.executions.read_text().splitlines()
    running: Counter[str] = Counter()
    for line in lines:
        kind, *_, pid = line.split()
        running[pid] += 1 if kind == "start" else -1
    busy = [
        i
        for i in world.fleet.instances
        if i.up and i.process is not None and running[str(i.process.pid)] > 0
    ]
    if busy and world.rng.random() < 0.8:
        return world.rng.choice(busy)
    return world.rng.choice(world.fleet.instances)


async def _kill(world: World) -> None:
    instance = _target(world)
    async with world.lock(f"bot:{instance.port}"):
        world.faults.append(f"kill :{instance.port}")
        await world.fleet.kill(instance)
        await asyncio.sleep(world.rng.uniform(0.2, 2.0))
        await world.fleet.start(instance, world.http)


async def _pause(world: World) -> None:
    instance = _target(world)
    if not instance.up:
        return
    seconds = world.rng.uniform(1.0, 3 * LEASE_SECONDS + 1)
    async with world.lock(f"bot:{instance.port}"):
        if not instance.up:
            return
        world.faults.append(f"pause :{instance.port} {seconds:.1f}s")
        world.fleet.pause(instance)
        await asyncio.sleep(seconds)
        world.fleet.resume(instance)


async def _postgres_restart(world: World) -> None:
    seconds = world.rng.uniform(0.5, 3.0)
    async with world.lock("postgres"):
        world.faults.append(f"postgres down {seconds:.1f}s")
        world.postgres.stop()
        await asyncio.sleep(seconds)
        await world.postgres.start()


async def _redis_restart(world: World) -> None:
    seconds = world.rng.uniform(0.5, 2.0)
    async with world.lock("redis"):
        world.faults.append(f"redis down {seconds:.1f}s")
        world.redis.stop()
        await asyncio.sleep(seconds)
        await world.redis.start()


async def _slack_5xx(world: World) -> None:
    seconds = world.rng.uniform(0.5, 2.0)
    async with world.lock("slack"):
        world.faults.append(f"slack 5xx {seconds:.1f}s")
        world.slack.down = "5xx"
        await asyncio.sleep(seconds)
        world.slack.down = None


FAULTS: list[Callable[[World], Awaitable[None]]] = [
    _kill,
    _pause,
    _postgres_restart,
    _redis_restart,
    _slack_5xx,
]


async def _run_schedule(world: World) -> None:
    for n in range(1, STEPS + 1):
        roll = world.rng.random()
        if roll < 0.4 or not world.threads:
            await _mention(world, n)
        elif roll < 0.75:
            thread = world.rng.choice(world.threads)
            await _decide(world, thread, double=world.rng.random() < 0.3)
            if world.rng.random() < 0.4:  # strike while the approved call runs
                await asyncio.sleep(world.rng.uniform(0.1, 0.6))
                fault = world.rng.choice([_kill, _pause, _pause, _postgres_restart])
                world.background.append(asyncio.create_task(fault(world)))
        else:
            fault = world.rng.choice(FAULTS)
            world.background.append(asyncio.create_task(fault(world)))
        await asyncio.sleep(world.rng.uniform(0.1, 0.8))
    await asyncio.gather(*world.background)


async def _heal_and_settle(world: World) -> None:
    """Every fault over; people click again what they meant to decide, until all is quiet."""
    world.slack.down = None
    for instance in world.fleet.instances:
        world.fleet.resume(instance)
        if instance.process is None or instance.process.returncode is not None:
            await world.fleet.start(instance, world.http)
    deadline = time.monotonic() + 150
    store = create_storage(world.postgres.url)
    try:
        while time.monotonic() < deadline:
            waiting = [t for t in world.threads if _still_waiting(world, t)]
            if not waiting:
                return
            for thread in waiting:
                if world.card(thread) is None:
                    await _ask_again_if_nothing_came(world, thread, store)
                else:
                    await _decide(world, thread)
            await asyncio.sleep(2 * LEASE_SECONDS)
    finally:
        await store.close()
    pytest.fail(
        "not settled: "
        + "; ".join(
            f"{t.record} ({t.word}, {t.intent}): "
            + repr([(_header(m) or m.text)[:80] for m in world.messages(t)])
            for t in world.threads
            if _still_waiting(world, t)
        )
        + f"; faults {world.faults}; logs in {world.fleet.logs}"
    )


async def _ask_again_if_nothing_came(world: World, thread: Thread, store: Storage) -> None:
    """A person whose request got no card asks again, once the bot holds no call for it: a
    mention acknowledged and then lost with its process (or told "storage is down") leaves
    nothing to decide; a call that pends without a card gets its card from the sweep."""
    now = time.monotonic()
    if thread.cardless_since is None:
        thread.cardless_since = now
    if now - thread.cardless_since < ASK_AGAIN_AFTER:
        return  # its run may still be on its way
    runs, _ = await store.list_snapshots(thread_id=f"slack:{TEAM}:{CHANNEL}:{thread.ts}")
    if runs:
        return
    thread.cardless_since = None
    thread.asked += 1
    ts = f"{int(time.time())}.{900000 + thread.asked * 1000 + int(thread.record[1:]):06d}"
    await _ask(world, thread, ts=ts, event_id=f"Ev{thread.record}-again-{thread.asked}")


def _still_waiting(world: World, thread: Thread) -> bool:
    card = world.card(thread)
    if card is None:
        return True  # Slack retries the mention until the bot answers it
    if thread.intent == "leave":
        return False
    return not world.answers(thread) or _live_buttons(card)


# -- what must hold ---------------------------------------------------------------------------
def _violations(world: World, executions: list[str]) -> list[str]:
    found: list[str] = []
    started = Counter(
        " ".join(line.split()[1:3]) for line in executions if line.startswith("start ")
    )
    for thread in world.threads:
        tool = {"delete": "delete_record", "label": "set_label", "refund": "refund"}[thread.word]
        runs = started[f"{tool} {thread.record}"]
        card, answers = world.card(thread), world.answers(thread)
        name = f"{thread.record} ({thread.word}, {thread.intent})"
        if tool != "set_label" and runs > 1:
            found.append(f"{name}: a non-idempotent call ran {runs} times")
        if thread.intent != "approve" and runs:
            found.append(f"{name}: ran {runs} times but was never approved")
        if thread.intent == "leave":
            if answers or (card is not None and not _live_buttons(card)):
                found.append(f"{name}: a request nobody decided has an outcome {answers}")
            continue
        if len(answers) != 1:
            found.append(f"{name}: the thread shows {len(answers)} outcomes: {answers}")
            continue
        [answer] = answers
        expected = {
            "approve": {f"Done {thread.record}.", f"Not done {thread.record}: interrupted."},
            "decline": {f"Not done {thread.record}: declined."},
        }[thread.intent]
        if answer not in expected:
            found.append(f"{name}: answered {answer!r}")
        if answer.startswith("Done") and runs == 0:
            found.append(f"{name}: reported done but never ran")
        if card is not None and _live_buttons(card):
            found.append(f"{name}: decided, but its card still has buttons")
        if card is not None and answer.startswith("Done") and "Interrupted" in _header(card):
            found.append(f"{name}: the tool completed but the card says interrupted")
        found.extend(_slack_side(world, thread, name, answer))
    return found


SHOWN = {"Done": "✅ Approved", "Not done": "⚠️ Interrupted"}
"""The header a card shows for the answer its thread holds (declined: "🚫 Declined")."""


def _slack_side(world: World, thread: Thread, name: str, answer: str) -> list[str]:
    """Every decided call's card shows its outcome; its thread holds one card and one answer."""
    cards = world.cards(thread)
    if len(cards) != 1:
        return [f"{name}: the thread holds {len(cards)} cards for one call"]
    header = _header(cards[0])
    if thread.intent == "decline":
        expected = "🚫 Declined"
    else:
        expected = SHOWN["Done" if answer.startswith("Done") else "Not done"]
    if not header.startswith(expected):
        return [f"{name}: answered {answer!r} but the card shows {header!r}"]
    return []


@pytest.mark.parametrize("seed", _seeds())
async def test_chaos_keeps_one_outcome_per_call(
    seed: int, slack: FakeSlackAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with capsys.disabled():
        print(f"\nchaos seed {seed} (replay: CHAOS_SEEDS={seed} pytest -m chaos)")
    rng = random.Random(seed)
    executions = tmp_path / "executions.log"
    executions.touch()
    postgres, redis = OwnPostgres(), OwnRedis(tmp_path)
    postgres.init()
    await postgres.start()
    await redis.start()
    warm = create_storage(postgres.url)  # migrate once, before three processes race to
    try:
        await warm.get_value("warm-up")
    finally:
        await warm.close()
    logs = Path(tempfile.mkdtemp(prefix=f"countersign-chaos-{seed}-"))  # kept on failure
    env = bot_env(
        slack_url=slack.base_url,
        storage_url=postgres.url,
        redis_url=redis.url,
        executions=executions,
        lease=LEASE_SECONDS,
    )
    fleet = Fleet(env, 3, logs)
    try:
        async with aiohttp.ClientSession() as http:
            for instance in fleet.instances:
                await fleet.start(instance, http)
            world = World(
                slack=slack,
                fleet=fleet,
                delivery=SlackDelivery(fleet, http, rng.choice),
                postgres=postgres,
                redis=redis,
                http=http,
                rng=rng,
                executions=executions,
            )
            await _run_schedule(world)
            await _heal_and_settle(world)
            await asyncio.sleep(3 * LEASE_SECONDS)  # anything late (a woken owner) shows now
            recorded = executions.read_text().splitlines()
            violations = _violations(world, recorded)
            with capsys.disabled():
                intents = Counter(t.intent for t in world.threads)
                again = sum(t.asked - 1 for t in world.threads)
                print(
                    f"chaos seed {seed}: {len(world.threads)} requests {dict(intents)}, "
                    f"{again} asked again, "
                    f"{sum(line.startswith('start ') for line in recorded)} tool starts, "
                    f"faults {world.faults}, undelivered events {world.delivery.undelivered}"
                )
            assert violations == [], (
                f"seed {seed}; faults: {world.faults}; logs in {logs}\n" + "\n".join(violations)
            )
    finally:
        await fleet.close()
        redis.stop()
        postgres.remove()
    shutil.rmtree(logs, ignore_errors=True)  # passed: nothing to look at
