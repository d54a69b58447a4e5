"""Who may decide and until when are checked by the runtime inside the claim, on every surface.

No card record, no sweep and no restart is needed: the stored call says who asked and when it
expires, and a lapsed claim of a dead instance is taken over by the running bot.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import bot.slack._messages as msg
from agents.models import ScriptItem, call, obj, reply
from bot.background._periodic import Background
from bot.slack._ids import APPROVE_ACTION
from storage import ClaimRecord, Storage, create_storage, utcnow
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import CHANNEL, TEAM, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

GATED: list[ScriptItem] = [call("delete_record", {"id": "abc-123"}), reply("Deleted abc-123.")]
TOKEN = "api-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_the_requester_approving_a_card_that_was_never_recorded_is_refused(
    slack: FakeSlackAPI, executions: Executions, tmp_path: Path
) -> None:
    path = tmp_path / "countersign.db"
    store = create_storage(f"sqlite+aiosqlite:///{path}")
    agent, _ = make_agent(GATED, executions)
    try:
        async with start_bot(slack, agent, store) as bot:
            ts = await bot.mention("delete record abc-123", user="U1")
            await bot.settle()
            [card] = bot.cards(ts)
            # The click arrives as if the card's record had not been written (or failed).
            with sqlite3.connect(path) as db:
                db.execute("DELETE FROM cards")
            assert await bot.services.cards.find(*_ids(card.blocks)) is None
            await bot.click(card, APPROVE_ACTION, user="U1")
            await bot.settle()
            assert executions.of("delete_record") == []
            [ephemeral] = slack.calls_to("chat.postEphemeral")
            assert (ephemeral["user"], ephemeral["text"]) == ("U1", msg.REFUSED_SELF_APPROVAL)
            [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
            assert (refused.actor, refused.data["rule"]) == ("U1", "self-approval")
            assert (await bot.agent.list_suspended_runs()).total == 1
    finally:
        await store.close()


def _ids(blocks: list[dict[str, object]]) -> tuple[str, str]:
    from bot.slack.blocks._refs import ApprovalRef

    for block in blocks:
        for element in block.get("elements", []) or []:  # type: ignore[union-attr]
            ref = ApprovalRef.decode(element.get("value"))  # type: ignore[union-attr]
            if ref is not None:
                return ref.run_id, ref.tool_call_id
    raise AssertionError("no approval reference on the card")


async def test_an_api_decision_by_the_requester_is_refused_with_403(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent(GATED, executions)
    env = {"API_TOKENS": tokens_file(tmp_path, {"u1-token": "U1"})}
    async with start_bot(slack, agent, store, env=env) as bot:
        await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        [run] = (await bot.agent.list_suspended_runs()).runs
        response = await bot.http.post(
            "/api/agents/ops/approve-tool-call",
            json={
                "runId": run.run_id,
                "toolCallId": run.tool_calls[0].tool_call_id,
            },
            headers={"Authorization": "Bearer u1-token"},  # U1's own token
        )
        assert response.status == 403
        body = await response.json()
        assert (body["code"], body["rule"]) == ("APPROVAL_NOT_ALLOWED", "self-approval")
        await bot.settle()
        assert executions.of("delete_record") == []
        assert (await bot.agent.list_suspended_runs()).total == 1


async def test_a_reply_by_a_non_approver_does_not_resume_the_question(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script: list[ScriptItem] = [
        call("open_ticket", {"title": "Printer on fire"}),
        obj({"answered": True, "resume_data": {"priority": "high"}}),
        reply("Only an approver can answer that."),
    ]
    agent, _ = make_agent(script, executions)
    async with start_bot(slack, agent, store, env={"APPROVERS": "U5"}) as bot:
        ts = await bot.mention("open a ticket: printer on fire", user="U1")
        await bot.settle()
        await bot.message("high please", thread_ts=ts, user="U7")
        await bot.settle()
        assert executions.of("open_ticket") == []
        pending = await bot.agent.list_suspended_runs(thread_id=f"slack:{TEAM}:{CHANNEL}:{ts}")
        assert pending.total == 1
        [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
        assert (refused.actor, refused.source) == ("U7", "thread-reply")
        assert refused.data["rule"] == "not-approver"
        assert refused.data["decision"] == "resume"  # the runtime's word, not a button's
        assert "provide" not in json.dumps(refused.data)


async def test_a_click_and_an_api_decision_after_expires_at_are_expired_without_a_sweep(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent(GATED * 2, executions)
    agent.default_options = {"approval_ttl_seconds": 0}  # expires the moment it is stored
    async with start_bot(slack, agent, store, env={"API_TOKEN": TOKEN}) as bot:
        ts = await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        [run] = (await bot.agent.list_suspended_runs()).runs
        response = await bot.http.post(
            "/api/agents/ops/approve-tool-call",
            json={
                "runId": run.run_id,
                "toolCallId": run.tool_calls[0].tool_call_id,
                "decidedBy": "U2",
            },
            headers=AUTH,
        )
        assert response.status == 409
        assert (await response.json())["code"] == "APPROVAL_EXPIRED"
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["text"] == msg.EXPIRED
        assert executions.of("delete_record") == []
        # the refused click flips the card at once (no sweep ran): no decision button is left
        flipped = bot.slack.messages[card.ts].blocks
        assert flipped[0]["text"]["text"].startswith("⌛ Expired")
        assert "approval:approve" not in str(flipped)  # only the requester's "Ask again"


async def test_a_lapsed_claim_of_a_dead_instance_is_reported_by_the_running_bot(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script = [
        call("delete_record", {"id": "9"}),
        lambda request: reply(request.messages[-1].content or ""),
    ]
    agent, _ = make_agent(script, executions)
    reported = asyncio.Event()

    async def watch(args: dict[str, object]) -> None:
        if '"interrupted"' in str(args.get("text")):
            reported.set()

    for method in ("chat.postMessage", "chat.update"):
        slack.on(method, watch)
    async with start_bot(slack, agent, store, env={"CLAIM_LEASE_SECONDS": "1"}) as bot:
        background = Background(bot.services).start()
        try:
            ts = await bot.mention("delete record 9", user="U1")
            await bot.settle()
            [run] = (await bot.agent.list_suspended_runs()).runs
            call_id = run.tool_calls[0].tool_call_id
            # Another instance claimed the approval, then died: its lease has lapsed.
            await store.claim(
                ClaimRecord(
                    run_id=run.run_id,
                    key=f"{call_id}#0",
                    tool_call_id=call_id,
                    decision="approved",
                    decided_by="U2",
                    decided_at=utcnow() - timedelta(seconds=5),
                    owner="dead",
                    lease_until=utcnow() - timedelta(seconds=1),
                )
            )
            await asyncio.wait_for(reported.wait(), 20)  # the periodic job, every half lease
        finally:
            await background.stop()
        await bot.settle()
        assert executions.of("delete_record") == []  # never silently re-run
        told = json.loads(bot.texts(ts)[-1])
        assert told["status"] == "interrupted"
