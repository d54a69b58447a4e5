"""The local workspace (SPEC 10) without a browser: the emulated Web API, Slack's signed
delivery to the bot's own ``/slack/events``, the page, and whole flows through its endpoints."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import APPROVE_ACTION, DECLINE_ACTION
from tests.bot.bot_process import serve_bot_process
from tests.bot.local.fixtures import ALEX, ROBIN, SAM, Local, local_workspace, texts
from tests.fakes.slack_signing import event_request


@pytest.fixture
async def local() -> AsyncIterator[Local]:
    async with local_workspace() as started:
        yield started


async def test_the_page_is_served_and_names_the_offline_model(local: Local) -> None:
    async with local.http.get(local.url + "/") as response:
        assert response.status == 200
        page = await response.text()
    assert 'id="model"' in page and "/_local/static/app.js" in page
    for name in ("app.js", "blockkit.js", "style.css"):
        async with local.http.get(f"{local.url}/_local/static/{name}") as response:
            assert response.status == 200
    async with local.http.get(f"{local.url}/_local/static/..%2Fsecrets") as response:
        assert response.status == 404
    state = await local.state()
    assert state["model"] == "offline demo model"
    assert state["user"] == ALEX and [p["id"] for p in state["people"]] == [ALEX, SAM, ROBIN]


async def test_the_header_names_the_openai_model_when_a_key_is_set() -> None:
    async with local_workspace(OPENAI_API_KEY="sk-test", OPENAI_MODEL="gpt-test") as local:
        assert (await local.state())["model"] == "OpenAI gpt-test"


async def test_the_bot_web_client_talks_to_the_emulated_web_api(local: Local) -> None:
    client = local.services.client
    assert client.base_url == local.url + "/_slack/api/"
    auth = await client.auth_test()
    assert (auth["team_id"], auth["user_id"]) == ("T0LOCAL", "U0BOT")
    forged = AsyncWebClient(token="xoxb-forged", base_url=client.base_url)
    with pytest.raises(SlackApiError, match="invalid_auth"):
        await forged.auth_test()
    with pytest.raises(SlackApiError, match="channel_not_found"):
        await client.chat_postMessage(channel="C_OTHER", text="hi")
    with pytest.raises(SlackApiError, match="message_not_found"):
        await client.chat_update(channel="C0OPS", ts="1.0", text="x")
    with pytest.raises(SlackApiError, match="invalid_trigger_id"):
        await client.views_open(trigger_id="made-up", view={"type": "modal"})
    groups = await client.usergroups_users_list(usergroup="S0APPROVERS")
    assert groups["users"] == [SAM]


async def test_a_page_message_is_signed_and_passes_bolts_signature_check(local: Local) -> None:
    ts = await local.say("list records")  # both deliveries answered 200 by bolt
    [answer] = await local.thread(ts)
    assert answer["text"].startswith("Here are records 1–10 of 50")
    [person] = [m for m in (await local.state())["messages"] if m["ts"] == ts]
    assert person["text"] == "<@U0BOT> list records"


async def test_a_forged_or_unsigned_delivery_still_gets_401(local: Local) -> None:
    envelope = {
        "type": "event_callback",
        "team_id": "T0LOCAL",
        "event_id": "EvForged",
        "event": {
            "type": "app_mention",
            "user": ALEX,
            "text": "<@U0BOT> delete record 1",
            "ts": "1.000001",
            "channel": "C0OPS",
        },
    }
    body, headers = event_request(envelope, "not-the-generated-secret")
    async with local.http.post(local.url + "/slack/events", data=body, headers=headers) as r:
        assert r.status == 401
    async with local.http.post(
        local.url + "/slack/events",
        data=json.dumps(envelope),
        headers={"Content-Type": "application/json"},
    ) as r:
        assert r.status == 401
    await local.settle()
    assert (await local.state())["messages"] == []


async def test_delete_approve_updates_the_card_in_place_and_the_record_is_gone(
    local: Local,
) -> None:
    ts = await local.say("delete record 42")
    card = await local.card(ts)
    actions = next(b for b in card["blocks"] if b["type"] == "actions")
    styles = {e["action_id"]: e.get("style") for e in actions["elements"]}
    assert styles[APPROVE_ACTION] == "primary" and styles[DECLINE_ACTION] == "danger"
    assert "delete-record" in texts([card]) and "*id*\\n`42`" in json.dumps(card["blocks"])

    await local.click(card, APPROVE_ACTION, user=SAM)
    decided = next(m for m in await local.thread(ts) if m["ts"] == card["ts"])
    assert decided["edited"] >= 1
    assert not any(b["type"] == "actions" for b in decided["blocks"])
    assert "Approved by <@U0SAM>" in texts([decided])
    assert "Done: record 42 (Acme Corp #42) was deleted." in texts(await local.thread(ts))

    check = await local.say("show record 42")
    assert "There is no record 42." in texts(await local.thread(check))


async def _submit_open_view(local: Local, user: str) -> bool:
    views = (await local.state(user))["views"]
    if not views:
        return False
    view = views[-1]
    values: dict[str, Any] = {}
    for block in view["blocks"]:
        if block["type"] == "input":
            element = block["element"]
            values[block["block_id"]] = {
                element["action_id"]: {"type": element["type"], "value": None}
            }
    answer = await local.post(
        f"/_local/views/{view['id']}/submit", {"user": user, "values": values}
    )
    assert answer["ok"], answer
    assert (await local.state(user))["views"] == []
    return True


async def test_decline_keeps_the_record_with_or_without_the_reason_modal(local: Local) -> None:
    ts = await local.say("delete record 7")
    card = await local.card(ts)
    await local.click(card, DECLINE_ACTION, user=SAM)
    await _submit_open_view(local, SAM)
    decided = next(m for m in await local.thread(ts) if m["ts"] == card["ts"])
    assert "Declined by <@U0SAM>" in texts([decided])
    assert "it was declined" in texts(await local.thread(ts))
    check = await local.say("show record 7")
    assert "Record 7:" in texts(await local.thread(check))


async def test_a_refund_over_100_goes_through_billing_and_its_approval(local: Local) -> None:
    ts = await local.say("refund order 7 for 250")
    card = await local.card(ts)
    assert "refund" in texts([card]) and "billing" in texts([card])
    await local.click(card, APPROVE_ACTION, user=SAM)
    assert "Refunded 250.00 on order 7" in texts(await local.thread(ts))


async def test_a_ticket_asks_for_a_priority_and_a_thread_reply_answers(local: Local) -> None:
    ts = await local.say("open a ticket about the printer")
    assert "What priority" in texts(await local.thread(ts))
    await local.say("high", thread_ts=ts)
    assert "Opened ticket #1 “printer” with high priority." in texts(await local.thread(ts))


async def test_anything_else_gets_the_help_text(local: Local) -> None:
    ts = await local.say("hello there")
    assert "delete record 42" in texts(await local.thread(ts))


async def test_long_polls_wake_on_a_change(local: Local) -> None:
    version = (await local.state())["version"]
    async with aiohttp.ClientSession() as other:
        poll = other.get(f"{local.url}/_local/state", params={"since": str(version)})
        await local.say("list records")
        async with poll as response:
            assert (await response.json())["version"] > version


@pytest.mark.processes
async def test_python_m_bot_without_a_token_serves_the_workspace_until_sigterm(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_"))}
    env.update(STORAGE_URL="memory://", LOG_LEVEL="INFO")
    env.pop("BOT_AGENT", None)
    env.pop("HOST", None)
    async with serve_bot_process(env, tmp_path) as bot:
        assert bot.health == {"ok": True, "mode": "local", "agent": "ops"}
        async with bot.http.get(f"{bot.url}/") as response:
            assert response.status == 200
    assert bot.returncode == 0
    [line] = [line for line in bot.stderr.splitlines() if bot.url in line]
    assert " INFO " in line  # where to go is news, not a warning


async def test_ephemeral_notes_and_response_urls_reach_only_the_clicker(local: Local) -> None:
    client = local.services.client
    ts = await local.say("list records")
    await client.chat_postEphemeral(channel="C0OPS", user=SAM, text="only sam", thread_ts=ts)
    assert "only sam" in texts(await local.thread(ts, user=SAM))
    assert "only sam" not in texts(await local.thread(ts, user=ALEX))

    [answer] = [
        m
        for m in local.workspace.messages.values()
        if m.thread_ts == ts and m.bot_id and m.ephemeral_for is None
    ]
    token = local.workspace.new_response_url(SAM, answer)
    url = f"{local.url}/_slack/respond/{token}"
    async with local.http.post(url, json={"text": "noted", "replace_original": False}) as r:
        assert r.status == 200
    assert "noted" in texts(await local.thread(ts, user=SAM))
    assert "noted" not in texts(await local.thread(ts, user=ALEX))
    async with local.http.post(url, json={"text": "replaced", "replace_original": True}) as r:
        assert r.status == 200
    assert answer.text == "replaced" and answer.blocks == []
    async with local.http.post(local.url + "/_slack/respond/unknown", json={}) as r:
        assert r.status == 404


async def test_cancelling_a_modal_closes_it_and_leaves_the_card_pending(local: Local) -> None:
    ts = await local.say("delete record 9")
    card = await local.card(ts)
    await local.click(card, DECLINE_ACTION, user=SAM)
    views = (await local.state(SAM))["views"]
    if not views:
        pytest.skip("this build declines without a reason modal")
    assert (await local.state(ALEX))["views"] == []  # a modal is only shown to its opener
    await local.post(f"/_local/views/{views[0]['id']}/close", {"user": SAM})
    assert (await local.state(SAM))["views"] == []
    still = next(m for m in await local.thread(ts) if m["ts"] == card["ts"])
    assert any(b["type"] == "actions" for b in still["blocks"])
