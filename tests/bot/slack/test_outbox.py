"""A decision taken elsewhere while Slack is unreachable reaches its card and thread once Slack
answers again: the writes are kept in storage (the outbox) and made exactly once."""

from __future__ import annotations

import pytest

from agents.models import call, reply
from bot.slack.delivery._outbox import METADATA_EVENT, flush_outbox
from storage import Storage
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

TOKEN = "api-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def _approve_through_the_api(bot: Bot) -> None:
    body = await (await bot.http.get("/api/agents/ops/suspended-runs", headers=AUTH)).json()
    run = body["runs"][0]
    response = await bot.http.post(
        "/api/agents/ops/approve-tool-call",
        json={"runId": run["runId"], "toolCallId": run["toolCalls"][0]["toolCallId"],
              "decidedBy": "alice"},
        headers=AUTH,
    )  # fmt: skip
    assert response.status == 200, await response.text()


@pytest.mark.parametrize("failure", ["5xx", "disconnect"])
async def test_an_api_approval_while_slack_is_down_reaches_card_and_thread_once_it_is_back(
    slack: FakeSlackAPI, store: Storage, executions: Executions, failure: str
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    env = {"API_TOKEN": TOKEN, "API_TOKEN_ACTS_FOR_USERS": "true"}  # decidedBy is the decider
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        slack.down = failure  # type: ignore[assignment]
        await _approve_through_the_api(bot)
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]
        [card] = bot.cards(ts)
        assert any(b["type"] == "actions" for b in card.blocks)  # not updated yet
        assert await flush_outbox(bot.services) == 0  # still down: kept
        kept = await store.list_outbox()
        assert [e.write["method"] for e in kept] == ["chat.update", "chat.postMessage"]
        assert [e.attempts for e in kept] == [1, 1]  # both tried, released for the next pass
        assert await store.list_messages("countersign:slack-outbox") == []  # not memory

        slack.down = None
        assert await flush_outbox(bot.services) == 2
        assert await flush_outbox(bot.services) == 0  # made once
        assert await store.list_outbox() == []  # made writes are removed
        [card] = bot.cards(ts)
        assert not any(b["type"] == "actions" for b in card.blocks)
        assert "Approved by alice" in str(card.blocks)
        assert bot.texts(ts).count("Deleted 7.") == 1


async def test_a_card_slack_refused_to_take_is_kept_and_posted_once_slack_answers(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    """Found by the chaos test: a card whose post met a Slack 5xx was lost (the call pended
    with no card anywhere). It is kept, posted when Slack is back, recorded and decidable."""
    from bot.slack.delivery._card_posts import make_kept_card

    agent, _ = make_agent([call("delete_record", {"id": "8"}), reply("Deleted 8.")], executions)
    async with start_bot(slack, agent, store) as bot:
        for _ in range(2):  # the client retries a 5xx once: both attempts fail
            slack.fail_next("chat.postMessage", status=503, error="service_unavailable")
        ts = await bot.mention("delete record 8", user="U1")
        await bot.settle()
        assert bot.cards(ts) == []
        assert [e.write["method"] for e in await store.list_outbox()] == ["card"]
        assert await flush_outbox(bot.services, make_kept_card) == 1
        assert await flush_outbox(bot.services, make_kept_card) == 0  # posted once
        [card] = bot.cards(ts)
        assert await store.list_outbox() == []
        response = await bot.click(card, "approval:approve", user="U2")  # recorded: decidable
        assert response.status == 200
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "8"}]
        assert bot.texts(ts).count("Deleted 8.") == 1


async def test_a_write_that_may_have_reached_slack_is_looked_for_before_it_is_posted_again(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    """Storage failed after Slack took a kept answer, before the entry was removed: the next
    pass finds the answer in the thread by its metadata id and does not post it twice."""
    from datetime import timedelta

    from bot.slack.delivery._outbox import enqueue, new_write
    from storage import utcnow

    agent, _ = make_agent([reply("Hi.")], executions)
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("hello", user="U1")
        await bot.settle()
        write = new_write(method="chat.postMessage", channel="C1", thread_ts=ts, text="Kept.")
        await enqueue(bot.services, write)
        await bot.services.client.chat_postMessage(  # the earlier attempt that reached Slack
            channel="C1", thread_ts=ts, text="Kept.", metadata=write.metadata
        )
        now = utcnow()  # ... was taken (one attempt counted) and never removed
        assert await store.take_outbox(write.id, now=now, retry_at=now - timedelta(seconds=1))
        assert await flush_outbox(bot.services) == 1
        assert bot.texts(ts).count("Kept.") == 1
        assert await store.list_outbox() == []


async def test_a_call_that_pends_without_any_card_is_given_one_once(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    """Found by the chaos test: an instance killed after storing a call and before posting its
    card left the call pending with no card. The sweep gives it one, once across instances."""
    from datetime import timedelta

    from bot.background import sweep
    from bot.slack.delivery._card_posts import LOST_AFTER_SECONDS, make_kept_card
    from storage import utcnow

    agent, _ = make_agent([call("delete_record", {"id": "9"}), reply("Deleted 9.")], executions)
    async with start_bot(slack, agent, store) as bot:
        ts = "1690000000.900000"
        run = await bot.agent.generate(  # as if the card's process died right after storing
            "delete record 9", thread_id=f"slack:T1:C1:{ts}", requested_by="U1"
        )
        assert run.finish_reason == "suspended" and bot.cards(ts) == []
        now = utcnow()
        await sweep(bot.services, now=now)  # too early: its card may be on its way
        assert await store.list_outbox() == []
        later = now + timedelta(seconds=LOST_AFTER_SECONDS + 1)
        await sweep(bot.services, now=later)
        await sweep(bot.services, now=later)  # another instance's pass: nothing more
        assert [e.write["method"] for e in await store.list_outbox()] == ["card"]
        assert await flush_outbox(bot.services, make_kept_card) == 1
        [card] = bot.cards(ts)
        assert (await bot.click(card, "approval:approve", user="U2")).status == 200
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "9"}]


async def test_a_kept_card_already_in_its_thread_is_recorded_not_posted_again(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    from bot.slack.delivery._card_posts import card_metadata, make_kept_card
    from bot.slack.delivery._outbox import KeptCard, enqueue, new_write

    agent, _ = make_agent([call("delete_record", {"id": "6"}), reply("Deleted 6.")], executions)
    async with start_bot(slack, agent, store) as bot:
        ts = "1690000000.600000"
        run = await bot.agent.generate(
            "delete record 6", thread_id=f"slack:T1:C1:{ts}", requested_by="U1"
        )
        [pending] = run.pending
        posted = await bot.services.client.chat_postMessage(  # it reached Slack, unrecorded
            channel="C1",
            thread_ts=ts,
            text="card",
            blocks=[{"type": "header", "text": {"type": "plain_text", "text": "Approve?"}}],
            metadata=card_metadata(run.run_id, pending.tool_call_id),
        )
        kept = KeptCard(
            team="T1", requester="U1", run_id=run.run_id, tool_call_id=pending.tool_call_id
        )
        await enqueue(
            bot.services,
            new_write(method="card", channel="C1", thread_ts=ts, text="", card=kept),
        )
        assert await flush_outbox(bot.services, make_kept_card) == 1
        assert len(slack.thread("C1", ts)) == 1  # not posted twice
        found = await bot.services.cards.find(run.run_id, pending.tool_call_id)
        assert found is not None and found.ts == posted["ts"]


async def test_a_decided_calls_answer_is_kept_while_it_is_posted_so_a_crash_cannot_lose_it(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    """Found by the chaos test: an instance killed while it posted a decided call's answer
    (Slack slow or retrying) lost the answer: the run had finished, nothing could recover it.
    The answer is kept in the outbox BEFORE it is posted, as an attempt already made (whoever
    makes it after a crash looks for it in the thread first), and removed once posted."""
    agent, _ = make_agent([call("delete_record", {"id": "9"}), reply("Deleted 9.")], executions)
    seen: list[list[tuple[str, int, str]]] = []

    async def while_posting(args: dict[str, object]) -> None:
        if args.get("text") == "Deleted 9.":
            kept = await store.list_outbox()
            seen.append([(e.write["method"], e.attempts, e.write["text"]) for e in kept])

    slack.on("chat.postMessage", while_posting)
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, "approval:approve", user="U2")
        await bot.settle()
        assert seen == [[("chat.postMessage", 1, "Deleted 9.")]]
        assert await store.list_outbox() == []  # posted: removed
        [posted] = [m for m in slack.thread("C1", ts) if m.text == "Deleted 9."]
        [call_] = [
            c for c in slack.calls_to("chat.postMessage") if c.args.get("text") == "Deleted 9."
        ]
        assert METADATA_EVENT in str(call_.args.get("metadata"))
        assert posted.ts
