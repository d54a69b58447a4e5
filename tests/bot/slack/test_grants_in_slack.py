"""Standing grants in Slack (SPEC 12, 15): a card whose rule allows grants offers "Approve and
allow…", whose modal (bounded by the rule) approves with a grant; a later matching call is a
compact "auto-approved under @…'s grant" line with a Revoke that works (and refuses people who
may not revoke, with an ephemeral); the Home tab lists "Your active grants" with Revoke."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import ClientResponse

from agents.models import call, reply
from bot.slack._ids import GRANT_ACTION, GRANT_VIEW, REVOKE_GRANT_ACTION
from bot.slack.blocks.standing._grant_modal import (
    DURATION_BLOCK,
    FREE_BLOCK,
    SCOPE_BLOCK,
    USES_BLOCK,
)
from storage import Storage
from tests.bot.harness import SECRET, TEAM, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import interaction_request

POLICY = """
[[rules]]
tools = ["delete-record"]
grants = { max_seconds = 3600, max_uses = 20 }
"""
DELETE_A = [call("delete_record", {"id": "a"}), reply("Deleted a.")]


@asynccontextmanager
async def _bot(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path, runs: int
) -> AsyncIterator[Bot]:
    policy = tmp_path / "countersign.toml"
    policy.write_text(POLICY, encoding="utf-8")
    agent, _ = make_agent(DELETE_A * runs, executions)
    env = {"POLICY_FILE": str(policy), "APPROVERS": "U2,U4"}
    async with start_bot(slack, agent, store, env=env) as bot:
        yield bot


def _accessory_click(message: PostedMessage, user: str) -> dict[str, Any]:
    """Slack's payload of a click on the button beside a message's section (a grant line)."""
    [block] = [b for b in message.blocks if b.get("accessory")]
    button = block["accessory"]
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A1",
        "team": {"id": TEAM, "domain": "test"},
        "trigger_id": "trigger-1",
        "container": {
            "type": "message",
            "message_ts": message.ts,
            "channel_id": message.channel,
            "thread_ts": message.thread_ts,
        },
        "channel": {"id": message.channel, "name": "ops"},
        "message": {"type": "message", "ts": message.ts, "thread_ts": message.thread_ts},
        "actions": [
            {
                "type": "button",
                "action_id": button["action_id"],
                "block_id": block.get("block_id"),
                "value": button["value"],
                "action_ts": str(time.time()),
            }
        ],
    }


async def _send(bot: Bot, payload: dict[str, Any]) -> ClientResponse:
    body, headers = interaction_request(payload, SECRET)
    response = await bot.http.post("/slack/events", data=body, headers=headers)
    assert response.status == 200
    await bot.settle()
    return response


def _values(**chosen: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        DURATION_BLOCK: {"value": {"selected_option": {"value": str(chosen["seconds"])}}},
        USES_BLOCK: {"value": {"selected_option": {"value": str(chosen["uses"])}}},
        SCOPE_BLOCK: {"value": {"selected_option": {"value": chosen.get("within", "thread")}}},
    }
    free = chosen.get("free", [])
    values[FREE_BLOCK] = {"value": {"selected_options": [{"value": n} for n in free]}}
    return values


async def _approve_with_grant(bot: Bot, ts: str, *, user: str = "U2") -> dict[str, Any]:
    [card] = bot.cards(ts)
    [actions] = [b for b in card.blocks if b["type"] == "actions"]
    assert GRANT_ACTION in [e["action_id"] for e in actions["elements"]]
    assert (await bot.click(card, GRANT_ACTION, user=user)).status == 200
    await bot.settle()
    view = bot.opened_views()[-1]
    assert view["callback_id"] == GRANT_VIEW
    response = await bot.submit(view, _values(seconds=3600, uses=2), user=user)
    assert response.status == 200
    await bot.settle()
    return view


async def test_the_grant_modal_is_bounded_by_the_rule_and_approves_with_a_grant(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _bot(slack, store, executions, tmp_path, runs=1) as bot:
        ts = await bot.mention("delete a", user="U1")
        await bot.settle()
        view = await _approve_with_grant(bot, ts)
        [grant] = await bot.agent.list_grants()
        [card] = bot.cards(ts)
        [update] = bot.updates_of(card.ts)
        said = str(update["blocks"])
        assert "allowed up to 2 later calls like it in this thread for 1 h" in said
        assert "for 1 h, with the same arguments" in said  # every argument pinned

    blocks = {b.get("block_id"): b for b in view["blocks"]}
    durations = [o["value"] for o in blocks[DURATION_BLOCK]["element"]["options"]]
    assert durations == ["900", "3600"]  # nothing past the rule's one hour
    uses = [int(o["value"]) for o in blocks[USES_BLOCK]["element"]["options"]]
    assert max(uses) == 20
    assert [o["value"] for o in blocks[SCOPE_BLOCK]["element"]["options"]] == [
        "thread",
        "resource",
    ]
    assert [o["value"] for o in blocks[FREE_BLOCK]["element"]["options"]] == ["id"]
    assert blocks[FREE_BLOCK]["optional"] is True  # nothing ticked: every argument pinned
    assert executions.of("delete_record") == [{"id": "a"}]
    assert (grant.granted_by, grant.max_uses, grant.pins) == ("U2", 2, {"id": "a"})


async def test_an_auto_approved_call_is_a_compact_line_whose_revoke_works(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _bot(slack, store, executions, tmp_path, runs=3) as bot:
        ts = await bot.mention("delete a", user="U1")
        await bot.settle()
        await _approve_with_grant(bot, ts)
        await bot.mention("delete a again", user="U1", thread_ts=ts)
        await bot.settle()
        [line] = [m for m in slack.thread("C1", ts) if "auto-approved" in (m.text + str(m.blocks))]
        text = line.blocks[0]["text"]["text"]
        assert "auto-approved under <@U2>'s grant (1 of 2 uses left, until <!date^" in text
        assert text.startswith(":white_check_mark: `delete_record` (`id=a`) auto-approved")
        assert line.blocks[0]["accessory"]["action_id"] == REVOKE_GRANT_ACTION
        assert len(bot.cards(ts)) == 1  # no new card
        assert executions.of("delete_record") == [{"id": "a"}, {"id": "a"}]

        await _send(bot, _accessory_click(line, "U3"))  # not the grantor, not an approver
        [refused] = slack.calls_to("chat.postEphemeral")
        assert refused["user"] == "U3" and "may revoke" in refused["text"]
        assert len(await bot.agent.list_grants()) == 1

        await _send(bot, _accessory_click(line, "U4"))  # an approver of the rule
        assert await bot.agent.list_grants() == []
        [update] = bot.updates_of(line.ts)
        assert "revoked by <@U4>" in str(update["blocks"])
        assert "accessory" not in str(update["blocks"])

        await bot.mention("delete a once more", user="U1", thread_ts=ts)
        await bot.settle()
        assert len(bot.cards(ts)) == 2  # revoked: the call waits on a card again
        assert len(executions.of("delete_record")) == 2


async def test_the_home_tab_lists_your_active_grants_with_revoke(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _bot(slack, store, executions, tmp_path, runs=1) as bot:
        ts = await bot.mention("delete a", user="U1")
        await bot.settle()
        await _approve_with_grant(bot, ts)
        home = await bot.open_home("U2")
        others = await bot.open_home("U4")

        texts = [str(b) for b in home["blocks"]]
        assert any("Your active grants" in t for t in texts)
        [row] = [b for b in home["blocks"] if b.get("accessory", {}).get("action_id")]
        assert row["accessory"]["action_id"] == REVOKE_GRANT_ACTION
        row_text = row["text"]["text"]
        assert "`delete_record`" in row_text and "2 of 2 uses left" in row_text
        assert "You have no active standing grants." in str(others["blocks"])

        payload = {
            "type": "block_actions",
            "user": {"id": "U2", "username": "u2", "team_id": TEAM},
            "api_app_id": "A1",
            "team": {"id": TEAM, "domain": "test"},
            "trigger_id": "trigger-home",
            "container": {"type": "view", "view_id": "VHOME"},
            "view": {"id": "VHOME", "type": "home", "blocks": home["blocks"]},
            "actions": [
                {
                    "type": "button",
                    "action_id": REVOKE_GRANT_ACTION,
                    "block_id": row["block_id"],
                    "value": row["accessory"]["value"],
                    "action_ts": str(time.time()),
                }
            ],
        }
        await _send(bot, payload)
        assert await bot.agent.list_grants() == []
        assert "You have no active standing grants." in str(slack.homes["U2"]["blocks"])


async def test_a_card_whose_rule_allows_no_grant_offers_none(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent(DELETE_A, executions)
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete a", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
    assert GRANT_ACTION not in str(card.blocks)


async def test_the_rules_free_args_come_ticked_so_the_default_grant_covers_other_records(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(
        POLICY.replace("max_uses = 20 }", 'max_uses = 20, free_args = ["id"] }'), encoding="utf-8"
    )
    delete_b = [call("delete_record", {"id": "b"}), reply("Deleted b.")]
    agent, _ = make_agent(DELETE_A + delete_b, executions)
    env = {"POLICY_FILE": str(policy), "APPROVERS": "U2,U4"}
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete a", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert (await bot.click(card, GRANT_ACTION, user="U2")).status == 200
        await bot.settle()
        view = bot.opened_views()[-1]
        blocks = {b.get("block_id"): b for b in view["blocks"]}
        ticked = blocks[FREE_BLOCK]["element"]["initial_options"]
        assert [o["value"] for o in ticked] == ["id"]
        # Submitted as shown (Slack sends the initial choices as the state's values).
        response = await bot.submit(
            view, _values(seconds=3600, uses=2, free=[o["value"] for o in ticked]), user="U2"
        )
        assert response.status == 200
        await bot.settle()
        [grant] = await bot.agent.list_grants()
        assert (grant.pins, grant.free_args) == ({}, ["id"])
        [card] = bot.cards(ts)
        assert "whatever their `id`" in str(bot.updates_of(card.ts)[-1]["blocks"])

        await bot.mention("delete b", user="U1", thread_ts=ts)
        await bot.settle()
        assert len(bot.cards(ts)) == 1  # another record, approved under the grant: no card
        assert executions.of("delete_record") == [{"id": "a"}, {"id": "b"}]
