"""``MODEL=offline``: a newcomer's own agent (``BOT_AGENT``) served on the offline model in the
local workspace, its tools called with ``/call <tool> key=value`` and gated as they would be
with a real model, without any key."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator

import pytest

from bot import APPROVE_ACTION
from tests.bot import your_agent
from tests.bot.local.fixtures import SAM, Local, local_workspace, texts


@pytest.fixture
async def local() -> AsyncIterator[Local]:
    importlib.reload(your_agent)  # a new Agent: a served one's runner closes with its bot
    async with local_workspace(MODEL="offline", BOT_AGENT="tests.bot.your_agent:agent") as started:
        yield started


async def test_your_tool_called_with_slash_call_waits_for_a_person_then_runs(
    local: Local,
) -> None:
    assert (await local.state())["model"] == "offline demo model"
    ts = await local.say('/call archive-ticket id=T-42 reason="duplicate of T-41"')
    card = await local.card(ts)
    assert "archive-ticket" in texts([card]) and "T-42" in texts([card])
    assert your_agent.archived == []  # nothing runs before a person approves
    await local.click(card, APPROVE_ACTION, user=SAM)
    assert your_agent.archived == [{"id": "T-42", "reason": "duplicate of T-41"}]
    assert 'archive-ticket returned: {"archived": "T-42"}' in texts(await local.thread(ts))


async def test_a_tool_without_approval_runs_at_once_with_its_values_typed(local: Local) -> None:
    ts = await local.say("/call quote-refund order=7 amount=12.5")
    [answer] = await local.thread(ts)
    assert answer["text"] == 'quote-refund returned: {"order": 7, "refund": 12.5}'


async def test_slash_call_alone_or_a_wrong_tool_lists_your_tools(local: Local) -> None:
    for message in ("/call", "/call delete-everything", "hello"):
        ts = await local.say(message)
        [answer] = await local.thread(ts)
        assert "/call archive-ticket id=… reason=…" in answer["text"], message
        assert "/call quote-refund order=… amount=…" in answer["text"], message
    assert your_agent.archived == []


async def test_the_built_in_agent_takes_slash_call_too() -> None:
    async with local_workspace(MODEL="offline", OPENAI_API_KEY="sk-unused") as local:
        assert (await local.state())["model"] == "offline demo model"
        ts = await local.say("/call get-record id=3")
        [answer] = await local.thread(ts)
        assert answer["text"].startswith("Record 3: ")
