"""The audit log says where each card was shown (Slack user, channel, message) and how each
decision was made: button, modal, API, thread reply, expiry."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import get_args

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from agents.models import ScriptItem, call, obj, reply
from bot.api import ApiAccess, add_api_routes
from bot.background._periodic import sweep_expired
from bot.slack._ids import APPROVE_ACTION
from bot.slack.blocks._refs import ApprovalRef
from storage import AuditKind, Storage, create_storage, utcnow
from tests.bot.harness import CHANNEL, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

TOKEN = "audit-test-token-0123456789"


def _ref(card: PostedMessage) -> ApprovalRef:
    actions = next(b for b in card.blocks if b["type"] == "actions")
    ref = ApprovalRef.decode(actions["elements"][0]["value"])
    assert ref is not None
    return ref


async def _card(bot: Bot, text: str) -> tuple[str, PostedMessage]:
    ts = await bot.mention(text, user="U1")
    await bot.settle()
    [card] = bot.cards(ts)
    return ts, card


async def test_presentations_and_every_way_of_deciding_are_audited(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script: list[ScriptItem] = [
        call("delete_record", {"id": "button"}),
        reply("done"),
        call("delete_record", {"id": "modal"}),
        reply("kept"),
        call("delete_record", {"id": "api"}),
        reply("done"),
        call("open_ticket", {"title": "Printer"}),
        obj({"answered": True, "resume_data": {"priority": "high"}}),
        reply("opened"),
        call("delete_record", {"id": "expiry"}),
        reply("expired"),
    ]
    agent, _ = make_agent(script, executions)
    async with start_bot(slack, agent, store, env={"APPROVAL_TTL_SECONDS": "600"}) as bot:
        _, by_button = await _card(bot, "delete button")
        await bot.click(by_button, APPROVE_ACTION, user="U2")
        await bot.settle()

        _, by_modal = await _card(bot, "delete modal")
        await bot.decline(by_modal, user="U3", reason="keep it")

        _, by_api = await _card(bot, "delete api")
        api_app = web.Application()
        add_api_routes(api_app, {"ops": bot.services.agent}, ApiAccess.service(TOKEN))
        async with TestClient(TestServer(api_app, host="127.0.0.1")) as api:
            ref = _ref(by_api)
            response = await api.post(
                "/api/agents/ops/approve-tool-call",
                json={"runId": ref.run_id, "toolCallId": ref.tool_call_id},
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            assert response.status == 200, await response.text()
            await bot.services.agent.drain()

        ticket = await bot.mention("open a ticket", user="U1")
        await bot.settle()
        await bot.message("high", thread_ts=ticket, user="U4")
        await bot.settle()

        _, by_expiry = await _card(bot, "delete expiry")
        await sweep_expired(bot.services, now=utcnow() + timedelta(seconds=601))
        await bot.settle()

        events = await store.query_audit()
        shown = [e for e in events if e.kind == "presented"]
        presented = [e for e in shown if "question" not in e.data]
        [question] = [e for e in shown if "question" in e.data]  # where the tool's question was
        assert (question.data["thread_ts"], question.data["team"]) == (ticket, "T1")
        assert [e.data["ts"] for e in presented] == [
            c.ts for c in (by_button, by_modal, by_api, by_expiry)
        ]
        for event in presented:
            assert (event.actor, event.data["channel"], event.data["team"]) == ("U1", CHANNEL, "T1")
            assert event.thread_id == f"slack:T1:{CHANNEL}:{event.data['thread_ts']}"
        decided = [(e.data["decision"], e.source, e.actor) for e in events if e.kind == "decided"]
        assert decided == [
            ("approved", "button", "U2"),
            ("declined", "modal", "U3"),
            ("approved", "api", None),  # the service token: no person
            ("resumed", "thread-reply", "U4"),
            ("expired", "expiry", "system"),
        ]
        assert {e.kind for e in events} <= set(get_args(AuditKind))  # a closed set
        runs = [e.run_id for e in events if e.kind == "decided"]
        for run_id in runs:
            assert await store.query_audit(run_id=run_id), run_id


async def test_a_card_is_found_from_its_record_not_from_the_audit_log(
    slack: FakeSlackAPI, executions: Executions, tmp_path: Path
) -> None:
    path = tmp_path / "countersign.db"
    store = create_storage(f"sqlite+aiosqlite:///{path}")
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("done")], executions)
    try:
        async with start_bot(slack, agent, store) as bot:
            _, card = await _card(bot, "delete record 7")
            ref = _ref(card)
            [shown] = [e for e in await store.query_audit() if e.kind == "presented"]
            with sqlite3.connect(path) as db:  # the audit log emptied (pruned, archived ...)
                db.execute("DELETE FROM audit")
            found = await bot.services.cards.find(ref.run_id, ref.tool_call_id)
    finally:
        await store.close()

    assert (shown.data["ts"], shown.data["team"]) == (card.ts, "T1")  # presentations audited
    assert found is not None and (found.ts, found.team, found.channel) == (card.ts, "T1", CHANNEL)
    assert (found.view.tool_name, found.view.requester) == ("delete_record", "U1")
