"""The App Home tab with many pending approvals, against the real bot: the ``home`` figure.

1. One real run of ``bench._click_agent``'s agent suspends on its gated ``delete_record``; its
   snapshot is copied ``pending`` times (new run ids, newest last), in a SQLite file. A third of
   them have a card record as the bot keeps it, a third none (their card was never posted), a
   third are of runs in no Slack thread (started through the API): the Home tab lists them all.
   The newest has its card.
2. ``python -m bot`` (HTTP mode, as in ``bench._clicks``) serves that file, talking to
   ``FakeSlack``, with ``APPROVERS`` the ``viewers``. They open their Home tab (a signed
   ``app_home_opened``) in turn, ``rounds`` times: each publish is timed from the POST to the
   ``views.publish`` reaching Slack, and the Slack calls made in between are counted. Then
   ``onlookers`` (people who may decide nothing) open theirs once.
3. One viewer approves the newest row from their Home tab: the Slack calls until every viewer's
   Home tab was published again are counted (the card's update and the answer included), and
   the ``views.publish`` among them: one per affected viewer (the approvers), none for an
   onlooker.
4. The requester opens theirs: nothing is theirs to decide, so that publish looks at as many
   runs as a view ever does (``SCAN_RUNS``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp

from agents import Agent
from agents.models import ScriptedModel, call
from bench._click_agent import AGENT
from bench._clicks import APPROVE, _bot, _signed
from bench._fake_slack import FakeSlack, Message
from storage import CardRecord, SnapshotRecord, Storage, create_storage, utcnow

TEAM = "T1"
CHANNEL = "C1"
REQUESTER = "UREQ"
"""Who asked for every pending call (nobody approves their own)."""


def _ts(n: int) -> str:
    return f"1700000000.{n:06d}"


async def _template(store: Storage) -> SnapshotRecord:
    agent = Agent(
        id=AGENT.id,
        model=ScriptedModel([call("delete_record", {"id": "rec-0"})]),
        tools=dict(AGENT.tools),
        storage=store,
    )
    result = await agent.generate("delete rec-0", thread_id="bench-home-template")
    if result.finish_reason != "suspended":
        raise RuntimeError(f"the template run ended {result.finish_reason!r}, not suspended")
    [record], _ = await store.list_snapshots(agent_id=AGENT.id, limit=1)
    await store.delete_snapshot(record.run_id)
    return record


def _copy(
    template: SnapshotRecord, n: int, newest: int
) -> tuple[SnapshotRecord, CardRecord | None]:
    run_id = f"bench-home-{n:06d}"
    data = json.loads(json.dumps(template.data))
    data["run_id"] = run_id
    [pending] = data["pending"]
    pending.update(args={"id": f"rec-{n}"}, local_args={"id": f"rec-{n}"}, requested_by=REQUESTER)
    at = utcnow() - timedelta(days=1) + timedelta(milliseconds=n)
    pending["suspended_at"] = at.isoformat()
    snapshot = SnapshotRecord(
        run_id=run_id,
        agent_id=template.agent_id,
        thread_id=f"slack:{TEAM}:{CHANNEL}:{_ts(n)}" if n % 3 != 2 or n == newest else f"api:{n}",
        resource_id=f"slack:{TEAM}:{CHANNEL}",
        suspended_at=at,
        version=1,
        data=data,
    )
    shown = {
        "tool_name": pending["tool_name"],
        "args": pending["args"],
        "fingerprint": pending["fingerprint"],
        "requester": REQUESTER,
        "agent_path": pending["agent_path"],
    }
    card = CardRecord(
        run_id=run_id,
        tool_call_id=pending["tool_call_id"],
        team=TEAM,
        channel=CHANNEL,
        ts=_ts(n),
        thread_ts=_ts(n),
        posted_at=at,
        shown=shown,
    )
    return snapshot, card if n % 3 == 0 or n == newest else None


async def _fill(url: str, pending: int) -> None:
    store = create_storage(url)
    try:
        template = await _template(store)
        batch = 200
        for start in range(0, pending, batch):
            ns = range(start, min(pending, start + batch))
            copies = [_copy(template, n, pending - 1) for n in ns]
            await asyncio.gather(*(store.save_snapshot(s) for s, _ in copies))
            await asyncio.gather(*(store.put_card(c) for _, c in copies if c is not None))
    finally:
        await store.close()


def _opened(user: str, n: int) -> str:
    event = {"type": "app_home_opened", "user": user, "tab": "home", "event_ts": _ts(n)}
    return json.dumps(
        {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": f"EvBenchHome{time.time_ns()}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": "UBOT", "is_bot": True}],
            "event": event,
        }
    )


def _home_click(view: dict[str, Any], user: str) -> str:
    block = next(b for b in view["blocks"] if b["type"] == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == APPROVE)
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A1",
        "token": "legacy",
        "team": {"id": TEAM, "domain": "bench"},
        "trigger_id": f"trigger-{user}",
        "container": {"type": "view", "view_id": "VHOME"},
        "view": {"id": "VHOME", "type": "home", "blocks": view["blocks"]},
        "actions": [
            {
                "type": "button",
                "action_id": APPROVE,
                "block_id": block["block_id"],
                "value": button["value"],
                "action_ts": str(time.time()),
            }
        ],
    }
    return "payload=" + quote(json.dumps(payload))


async def _post(http: aiohttp.ClientSession, url: str, body: str, content_type: str) -> None:
    async with http.post(
        f"{url}/slack/events", data=body, headers=_signed(body, content_type)
    ) as response:
        if response.status != 200:
            raise RuntimeError(f"the bot answered {response.status}: {await response.text()}")


def _published(slack: FakeSlack, since: int, count: int) -> bool:
    """At least ``count`` ``views.publish`` calls since call number ``since``."""
    return slack.calls[since:].count("views.publish") >= count


async def run_home(
    pending: int = 10_000,
    *,
    viewers: int = 3,
    onlookers: int = 10,
    rounds: int = 3,
    onlookers_first: bool = False,
    data_dir: Path | None = None,
    settle_s: float = 120.0,
) -> dict[str, Any]:
    """Fill a store with ``pending`` approvals, then time Home tab publishes and count calls
    (``onlookers_first``: the onlookers open their Home tab before the approvers do)."""
    with tempfile.TemporaryDirectory(dir=data_dir) as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench-home.db'}"
        started = time.perf_counter()
        await _fill(url, pending)
        fill_s = time.perf_counter() - started
        people = [f"UVIEWER{k}" for k in range(viewers)]
        approvers = {"APPROVERS": ",".join(people)}
        async with (
            FakeSlack() as slack,
            _bot(slack, url, approvers) as bot,
            aiohttp.ClientSession() as http,
        ):

            async def open_onlookers() -> None:  # nothing theirs to decide: views never change
                for k in range(onlookers):
                    since = len(slack.calls)
                    await _post(http, bot, _opened(f"UONLOOKER{k}", k), "application/json")
                    async with asyncio.timeout(settle_s):
                        await slack.wait_until(partial(_published, slack, since, 1))

            if onlookers_first:  # the approvers opened theirs last: among the viewers kept
                await open_onlookers()
            timings: list[float] = []
            calls: list[int] = []
            for n in range(rounds * viewers):
                user = people[n % viewers]
                since = len(slack.calls)
                started = time.perf_counter()
                await _post(http, bot, _opened(user, n), "application/json")
                async with asyncio.timeout(settle_s):
                    await slack.wait_until(partial(_published, slack, since, 1))
                timings.append((time.perf_counter() - started) * 1000)
                calls.append(len(slack.calls) - since)
            if not onlookers_first:
                await open_onlookers()
            view = slack.homes[people[0]]
            rows = sum(1 for b in view["blocks"] if b["type"] == "actions")
            newest = _ts(pending - 1)
            slack.messages[newest] = Message(
                channel=CHANNEL, ts=newest, thread_ts=newest, text="", blocks=[], was_card=True
            )
            since = len(slack.calls)
            click = _home_click(view, people[0])
            await _post(http, bot, click, "application/x-www-form-urlencoded")
            try:
                async with asyncio.timeout(settle_s):
                    await slack.wait_until(partial(_published, slack, since, viewers))
            except TimeoutError:
                got = slack.calls[since:].count("views.publish")
                raise RuntimeError(
                    f"a decision republished {got} of the {viewers} approvers' Home tabs within "
                    f"{settle_s:.0f} s (the bot keeps the most recent Home viewers only)"
                ) from None
            await asyncio.sleep(1.5)  # anything after (coalesced, paced) is counted too
            decision = slack.calls[since:]
            since = len(slack.calls)  # the requester may decide none: the scan's bound
            started = time.perf_counter()
            await _post(http, bot, _opened(REQUESTER, rounds * viewers), "application/json")
            async with asyncio.timeout(settle_s):
                await slack.wait_until(partial(_published, slack, since, 1))
            nothing_ms = (time.perf_counter() - started) * 1000
    timings.sort()
    return {
        "figure": "home",
        "storage": "sqlite",
        "pending": pending,
        "viewers": viewers,
        "onlookers": onlookers,
        "publishes": len(timings),
        "rows": rows,
        "publish_median_ms": round(statistics.median(timings), 3),
        "publish_max_ms": round(timings[-1], 3),
        "publish_nothing_ms": round(nothing_ms, 3),
        "slack_calls_first_publish": calls[0],
        "slack_calls_per_publish": calls[-1],
        "slack_calls_per_decision": len(decision),
        "home_publishes_per_decision": decision.count("views.publish"),
        "permalink_calls": slack.calls.count("chat.getPermalink"),
        "fill_s": round(fill_s, 1),
    }
