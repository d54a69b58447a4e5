"""Edit: a modal generated from the tool's input schema, prefilled; submitting approves with
the edited arguments; invalid values are shown in the modal and nothing is claimed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, cast

import pytest
from pydantic import BaseModel, Field

from agents import Agent
from agents.models import ScriptedModel, call, reply
from bot.slack._ids import EDIT_ACTION, EDIT_VIEW
from storage import Storage
from tests.bot.harness import Bot, start_bot
from tests.counting import CountingStorage
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tools import ToolContext, create_tool

ARGS = {"service": "api", "replicas": 3, "cpu": 0.5, "dry_run": True, "env": "staging"}


class ScaleInput(BaseModel):
    service: str = Field(description="Service name")
    replicas: int = Field(ge=1, le=20)
    cpu: float
    dry_run: bool = False
    env: Literal["staging", "prod"]


def _agent(runs: list[dict[str, Any]], sub_agent: bool = False) -> Agent:
    async def scale(input: ScaleInput, ctx: ToolContext) -> dict[str, Any]:
        runs.append(input.model_dump())
        return {"scaled": input.service}

    tool = create_tool(
        id="scale",
        description="Scale a service (by replicas and CPU)",
        title="Scale a service",
        input_schema=ScaleInput,
        execute=scale,
        require_approval=True,
    )
    inner = Agent(
        id="infra",
        description="Infrastructure",
        model=ScriptedModel([call("scale", ARGS), reply("Scaled.")]),
        tools={"scale": tool},
    )
    if not sub_agent:
        return inner
    return Agent(
        id="ops",
        model=ScriptedModel([call("agent-infra", {"prompt": "scale api"}), reply("Done.")]),
        agents={"infra": inner},
    )


@asynccontextmanager
async def _card(
    slack: FakeSlackAPI, store: Storage, runs: list[dict[str, Any]], sub_agent: bool = False
) -> AsyncIterator[tuple[Bot, str, PostedMessage]]:
    async with start_bot(slack, _agent(runs, sub_agent), store) as bot:
        ts = await bot.mention("scale api")
        await bot.settle()
        [card] = bot.cards(ts)
        yield bot, ts, card


async def _open(bot: Bot, card: PostedMessage) -> dict[str, Any]:
    assert (await bot.click(card, EDIT_ACTION, user="U2")).status == 200
    await bot.settle()
    [view] = bot.opened_views()
    return view


def _inputs(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def _state(**values: Any) -> dict[str, Any]:
    """``view.state.values`` as Slack sends it for the given raw element values."""
    state: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, dict):
            element = {"type": "static_select", "selected_option": value}
        else:
            element = {"type": "plain_text_input", "value": value}
        state[f"field:{name}"] = {"value": element}
    return state


def _option(value: Any) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": str(value)}, "value": json.dumps(value)}


EDITED = _state(
    service="api",
    replicas="5",
    cpu="1.5",
    dry_run=_option(False),
    env=_option("prod"),
)


async def test_edit_opens_a_form_of_the_input_schema_prefilled_with_the_arguments(
    slack: FakeSlackAPI, store: Storage
) -> None:
    async with _card(slack, store, []) as (bot, _, card):
        view = await _open(bot, card)
        assert view["callback_id"] == EDIT_VIEW
        inputs = _inputs(view)
        assert list(inputs) == [f"field:{n}" for n in ARGS]
        assert inputs["field:service"]["element"]["type"] == "plain_text_input"
        assert inputs["field:service"]["element"]["initial_value"] == "api"
        assert inputs["field:service"]["hint"]["text"] == "Service name"
        replicas = inputs["field:replicas"]["element"]
        assert (replicas["type"], replicas["initial_value"]) == ("number_input", "3")
        assert replicas["is_decimal_allowed"] is False and replicas["max_value"] == "20"
        cpu = inputs["field:cpu"]["element"]
        assert (cpu["type"], cpu["is_decimal_allowed"]) == ("number_input", True)
        dry_run = inputs["field:dry_run"]["element"]
        assert dry_run["type"] == "static_select"
        assert dry_run["initial_option"]["value"] == "true"
        env = inputs["field:env"]["element"]
        assert [o["value"] for o in env["options"]] == ['"staging"', '"prod"']
        assert env["initial_option"]["value"] == '"staging"'


async def test_submitting_approves_with_the_edited_arguments_and_shows_both(
    slack: FakeSlackAPI, store: Storage
) -> None:
    runs: list[dict[str, Any]] = []
    async with _card(slack, store, runs) as (bot, ts, card):
        view = await _open(bot, card)
        response = await bot.submit(view, EDITED, user="U2")
        assert response.status == 200
        await bot.settle()
        edited = {"service": "api", "replicas": 5, "cpu": 1.5, "dry_run": False, "env": "prod"}
        assert runs == [edited]
        [updated] = bot.cards(ts)
        text = json.dumps(updated.blocks)
        assert "Original arguments" in text and "Changed by the approver" in text
        changed = [f["text"] for b in updated.blocks for f in b.get("fields") or []][5:]
        assert changed == [
            "*replicas* (was)\n`3`",
            "*replicas* (approved)\n`5`",
            "*cpu* (was)\n`0.5`",
            "*cpu* (approved)\n`1.5`",
            "`dry_run` (was)\n`true`",
            "`dry_run` (approved)\n`false`",
            "*env* (was)\n`staging`",
            "*env* (approved)\n`prod`",
        ]
        assert "Approved by <@U2>" in text and not any(
            b["type"] == "actions" for b in updated.blocks
        )
        [decided] = [e for e in await store.query_audit() if e.kind == "decided"]
        assert (decided.actor, decided.source) == ("U2", "modal")
        assert decided.data["edited"] is True
        assert decided.data["original_args"] == ARGS and decided.data["args"] == edited
        assert bot.texts(ts)[-1] == "Scaled."


async def test_invalid_values_are_shown_in_the_modal_and_nothing_is_claimed(
    slack: FakeSlackAPI, store: Storage
) -> None:
    runs: list[dict[str, Any]] = []
    async with _card(slack, store, runs) as (bot, ts, card):
        view = await _open(bot, card)
        bad = {**EDITED, **_state(replicas="50", cpu="fast")}
        response = await bot.submit(view, bad, user="U2")
        assert response.status == 200
        body = await response.json()
        assert body["response_action"] == "errors"
        assert set(body["errors"]) == {"field:cpu"}
        too_many = {**EDITED, **_state(replicas="50")}
        body = await (await bot.submit(view, too_many, user="U2")).json()
        assert body["response_action"] == "errors"
        assert list(body["errors"]) == ["field:replicas"]
        assert "20" in body["errors"]["field:replicas"]
        await bot.settle()
        assert runs == [] and bot.updates_of(card.ts) == []
        pending = await bot.services.agent.list_suspended_runs(thread_id=f"slack:T1:C1:{ts}")
        assert pending.total == 1
        await bot.submit(view, EDITED, user="U2")
        await bot.settle()
        assert runs and runs[0]["replicas"] == 5


async def test_a_sub_agent_call_is_edited_through_the_inner_tool_schema(
    slack: FakeSlackAPI, store: Storage
) -> None:
    runs: list[dict[str, Any]] = []
    async with _card(slack, store, runs, sub_agent=True) as (bot, ts, card):
        view = await _open(bot, card)
        assert list(_inputs(view)) == [f"field:{n}" for n in ARGS]
        await bot.submit(view, EDITED, user="U2")
        await bot.settle()
        assert runs and runs[0]["env"] == "prod"
        assert bot.texts(ts)[-1] == "Done."


@pytest.mark.parametrize("sub_agent", [False, True], ids=["own-tool", "sub-agent"])
async def test_the_edit_modal_finds_its_call_in_one_read_without_a_listing(
    slack: FakeSlackAPI, store: Storage, sub_agent: bool
) -> None:
    counted = CountingStorage(store)
    async with _card(slack, cast(Storage, counted), [], sub_agent) as (bot, _, card):
        counted.reset()
        view = await _open(bot, card)
        assert view["callback_id"] == EDIT_VIEW and _inputs(view)
        assert counted.made("list_snapshots") == 0
        assert counted.made("load_run_and_escalations") == 1  # agent.pending_call, once


async def test_a_card_is_posted_from_its_chunk_without_reading_the_call_again(
    slack: FakeSlackAPI, store: Storage
) -> None:
    counted = CountingStorage(store)
    async with start_bot(slack, _agent([]), cast(Storage, counted)) as bot:
        ts = await bot.mention("scale api")
        await bot.settle()
        [card] = bot.cards(ts)
        # described: the tool's own title (never its description)
        assert card.blocks[0]["text"]["text"] == "Approve Scale a service?"
        assert "by replicas and CPU" not in str(card.blocks)
        assert counted.made("list_snapshots") == 1  # the message's own read of its thread
        assert counted.made("load_run_and_escalations") == 0
