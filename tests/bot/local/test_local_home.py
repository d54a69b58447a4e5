"""The App Home tab in the local workspace without a browser: opening it delivers a signed
``app_home_opened``, the bot's ``views.publish`` and ``chat.getPermalink`` are answered by the
emulator, and a click on the Home tab reaches the card in its thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError

from bot import APPROVE_ACTION
from tests.bot.local.fixtures import ALEX, SAM, Local, local_workspace


@pytest.fixture
async def local() -> AsyncIterator[Local]:
    async with local_workspace() as started:
        yield started


async def _home(local: Local, user: str) -> dict[str, Any]:
    assert (await local.post("/_local/home", {"user": user}))["ok"]
    home: dict[str, Any] = (await local.state(user))["home"]
    assert home is not None and home["type"] == "home"
    return home


async def test_opening_home_publishes_what_waits_for_that_person_with_a_link_to_the_thread(
    local: Local,
) -> None:
    ts = await local.say("delete record 42")
    sam = await _home(local, SAM)
    text = str(sam["blocks"])
    card = await local.card(ts)
    link = f"{local.url}/archives/C0OPS/p{card['ts'].replace('.', '')}?thread_ts={ts}&cid=C0OPS"
    assert "Waiting for you" in text and f"{link}|open the thread" in text
    fields = [f["text"] for b in sam["blocks"] for f in b.get("fields") or []]
    assert fields == ["*id*\n`42`"]  # the row's arguments, as on the card
    async with local.http.get(link, allow_redirects=False) as opened:  # the page, on the thread
        assert opened.status == 302 and opened.headers["Location"] == f"/#thread={ts}"
    alex = await _home(local, ALEX)  # the requester may not approve their own request
    assert "Nothing is waiting for you" in str(alex["blocks"])


async def test_approve_on_the_home_tab_decides_the_card_and_empties_the_tab(local: Local) -> None:
    ts = await local.say("delete record 42")
    home = await _home(local, SAM)
    [block] = [b for b in home["blocks"] if b["type"] == "actions"]
    answer = await local.post(
        "/_local/home/actions",
        {"user": SAM, "block_id": block["block_id"], "action_id": APPROVE_ACTION},
    )
    assert answer["ok"]
    await local.settle()
    card = await local.card(ts)
    assert card["blocks"][0]["text"]["text"].startswith("✅ Approved")
    assert "Nothing is waiting for you" in str((await local.state(SAM))["home"]["blocks"])


async def test_views_publish_and_get_permalink_answer_as_slack_does(local: Local) -> None:
    client = local.services.client
    ts = await local.say("list records")
    link = await client.chat_getPermalink(channel="C0OPS", message_ts=ts)
    assert link["permalink"] == f"{local.url}/#thread={ts}"
    with pytest.raises(SlackApiError, match="message_not_found"):
        await client.chat_getPermalink(channel="C0OPS", message_ts="1.0")
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        await client.views_publish(user_id=SAM, view={"type": "modal", "blocks": []})
    with pytest.raises(SlackApiError, match="user_not_found"):
        await client.views_publish(user_id="U0NOBODY", view={"type": "home", "blocks": []})
    published = await client.views_publish(user_id=SAM, view={"type": "home", "blocks": []})
    with pytest.raises(SlackApiError, match="hash_conflict"):
        await client.views_publish(user_id=SAM, view={"type": "home", "blocks": []}, hash="stale")
    again = await client.views_publish(
        user_id=SAM, view={"type": "home", "blocks": []}, hash=published["view"]["hash"]
    )
    assert again["view"]["id"] == published["view"]["id"]
