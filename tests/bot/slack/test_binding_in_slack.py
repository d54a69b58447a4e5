"""SPEC 3.3 in Slack: an edit is gated under the rule of the edited arguments (the demo's
refund over 1,000 needs two approvers and a confirm), a redefined tool is presented again on a
new card, and only the requester may Withdraw a card."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from bot.slack._ids import APPROVE_ACTION, EDIT_ACTION, WITHDRAW_ACTION
from bot.slack.blocks._refs import ApprovalRef
from storage import Storage
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.bot.slack.test_mcp_in_slack import mcp_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.tools.conftest import calls
from tools import Tool, ToolContext, create_tool

DEMO_POLICY = Path(__file__).parents[3] / "bot" / "demo" / "countersign.toml"
ALEX, SAM, UC = "U1", "U2", "U3"


class RefundInput(BaseModel):
    order: int
    amount: float


def _ops(refunds: list[dict[str, Any]]) -> Agent:
    """The demo's shape: ops delegates to billing, whose refund needs approval over 100."""

    async def refund(input: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        refunds.append(input.model_dump())
        return {"refunded": input.amount}

    billing = Agent(
        id="billing",
        description="Refunds",
        model=ScriptedModel([call("refund", {"order": 49, "amount": 300}), reply("Refunded.")]),
        tools=[
            create_tool(
                id="refund",
                description="Issue a refund",
                input_schema=RefundInput,
                execute=refund,
                require_approval=lambda ctx: ctx.args["amount"] > 100,
            )
        ],
    )
    return Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "refund 49"}), reply("Done.")]),
        agents={"billing": billing},
    )


def _env() -> dict[str, str]:
    return {"POLICY_FILE": str(DEMO_POLICY), "ALLOW_SELF_APPROVAL": "false"}


def _amount(value: str) -> dict[str, Any]:
    return {
        "field:order": {"value": {"type": "plain_text_input", "value": "49"}},
        "field:amount": {"value": {"type": "plain_text_input", "value": value}},
    }


async def _card(bot: Bot) -> tuple[str, PostedMessage]:
    ts = await bot.mention("refund order 49 for 300", user=ALEX)
    await bot.settle()
    [card] = bot.cards(ts)
    return ts, card


async def _edit(bot: Bot, card: PostedMessage, amount: str, user: str = SAM) -> dict[str, Any]:
    assert (await bot.click(card, EDIT_ACTION, user=user)).status == 200
    await bot.settle()
    view = bot.opened_views()[-1]
    response = await bot.submit(view, _amount(amount), user=user)
    assert response.status == 200
    await bot.settle()
    return view


def _text(message: PostedMessage) -> str:
    return str(message.blocks)


def _digest(card: PostedMessage) -> str | None:
    """The definition digest a card's Approve button carries."""
    [actions] = [b for b in card.blocks if b["type"] == "actions"]
    approve = next(e for e in actions["elements"] if e["action_id"] == APPROVE_ACTION)
    ref = ApprovalRef.decode(approve["value"])
    return None if ref is None else ref.definition_digest


async def test_an_edit_over_1000_in_the_modal_runs_nothing_and_posts_a_two_person_card(
    slack: FakeSlackAPI, store: Storage
) -> None:
    refunds: list[dict[str, Any]] = []
    async with start_bot(slack, _ops(refunds), store, env=_env()) as bot:
        ts, card = await _card(bot)
        view = await _edit(bot, card, "1150")

        assert refunds == []
        assert "amount above 1,000 need 2 different approvers" in str(view["blocks"])
        old, new = bot.cards(ts)
        assert "Replaced" in _text(old) and "approval:approve" not in _text(old)
        assert "1 of 2 approvals" in _text(new) and "1150" in _text(new)
        [actions] = [b for b in new.blocks if b["type"] == "actions"]
        approve = next(e for e in actions["elements"] if e["action_id"] == APPROVE_ACTION)
        assert approve.get("confirm")  # the rule for the edited amount asks to confirm
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.args == {"order": 49, "amount": 1150}
        assert (pending.approvals_required, pending.approved_by) == (2, [SAM])
        assert pending.edited_from == {"order": 49, "amount": 300}

        await bot.click(new, APPROVE_ACTION, user=SAM)  # the editor again: already counted
        await bot.settle()
        assert refunds == []
        await bot.click(new, APPROVE_ACTION, user=UC)
        await bot.settle()
        assert refunds == [{"order": 49, "amount": 1150}]


async def test_an_edit_that_needs_nothing_more_runs_at_once(
    slack: FakeSlackAPI, store: Storage
) -> None:
    refunds: list[dict[str, Any]] = []
    async with start_bot(slack, _ops(refunds), store, env=_env()) as bot:
        ts, card = await _card(bot)
        await _edit(bot, card, "250")
        assert refunds == [{"order": 49, "amount": 250}]
        [only] = bot.cards(ts)
        assert "Approved" in _text(only)


async def test_only_the_requester_may_withdraw_and_the_card_says_withdrawn(
    slack: FakeSlackAPI, store: Storage
) -> None:
    refunds: list[dict[str, Any]] = []
    async with start_bot(slack, _ops(refunds), store, env=_env()) as bot:
        ts, card = await _card(bot)
        await bot.click(card, WITHDRAW_ACTION, user=SAM)
        await bot.settle()
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == SAM and "withdraw" in ephemeral["text"]
        [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
        assert (refused.actor, refused.data["rule"]) == (SAM, "not-requester")
        assert await bot.agent.list_suspended_runs() is not None
        assert (await bot.agent.list_suspended_runs()).total == 1

        await bot.click(card, WITHDRAW_ACTION, user=ALEX)
        await bot.settle()
        [withdrawn] = bot.cards(ts)
        assert "↩️ Withdrawn" in _text(withdrawn)
        assert refunds == [] and (await bot.agent.list_suspended_runs()).total == 0


@pytest.mark.processes
async def test_a_tool_its_mcp_server_redefines_under_an_open_card_runs_nothing_on_approve(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    script = [call("ops_transfer", {"account": "A-1", "amount": 5}), reply("Moved.")]
    log = tmp_path / "calls.log"
    async with mcp_bot(slack, store, tmp_path, script) as bot:
        ts = await bot.mention("move 5 from A-1", user=ALEX)
        await bot.settle()
        [card] = bot.cards(ts)
        assert "destructive" in _text(card)
        shown = bot.agent.tools["ops_transfer"].definition_digest
        context = ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")
        await bot.agent.tools["ops_redefine_transfer"].run({}, context)
        for _ in range(100):  # the server's list_changed reaches the bot's tool list
            if bot.agent.tools["ops_transfer"].definition_digest != shown:
                break
            await asyncio.sleep(0.05)
        assert bot.agent.tools["ops_transfer"].definition_digest != shown

        await bot.click(card, APPROVE_ACTION, user=SAM)
        await bot.settle()

        assert [c for c in calls(log) if c.startswith("transfer")] == []
        old, new = bot.cards(ts)
        assert "Replaced" in _text(old) and "tool changed" in _text(old)
        assert "destructive" not in _text(new)  # the new definition's annotations
        assert _digest(new) == bot.agent.tools["ops_transfer"].definition_digest != shown
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == SAM
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.definition_digest == bot.agent.tools["ops_transfer"].definition_digest
        assert pending.approved_by == []

        await bot.click(new, APPROVE_ACTION, user=SAM)
        await bot.settle()
        assert bot.texts(ts)[-1] == "Moved."
    assert [c for c in calls(log) if c.startswith("transfer")] == ["transfer A-1 5000"]


# -- the HTTP API ---------------------------------------------------------------------------------

API_PEOPLE = {"sam-token": SAM, "alex-token": ALEX}


def _api_env(tmp_path: Path) -> dict[str, str]:
    return {**_env(), "API_TOKENS": tokens_file(tmp_path, API_PEOPLE)}


async def _post(bot: Bot, tail: str, token: str, body: dict[str, Any]) -> tuple[int, Any]:
    response = await bot.http.post(
        f"/api/agents/ops/{tail}", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    answer = await response.json()
    await bot.settle()
    return response.status, answer


async def test_edited_args_over_the_api_are_gated_under_the_rule_of_the_edited_args(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    refunds: list[dict[str, Any]] = []
    async with start_bot(slack, _ops(refunds), store, env=_api_env(tmp_path)) as bot:
        ts, _ = await _card(bot)
        [run] = (await bot.agent.list_suspended_runs()).runs
        ids = {"runId": run.run_id, "toolCallId": run.tool_calls[0].tool_call_id}

        edited = {**ids, "args": {"order": 49, "amount": 1150}}
        status, answer = await _post(bot, "approve-tool-call?wait=true", "sam-token", edited)

        assert status == 200, answer
        assert answer["finishReason"] == "suspended" and refunds == []
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert (pending.approvals_required, pending.approved_by) == (2, [SAM])
        old, new = bot.cards(ts)  # the Slack edge was told: the old card replaced, a new one
        assert "Replaced" in _text(old) and "1 of 2 approvals" in _text(new)


async def test_the_requester_withdraws_over_the_api_and_nobody_else_may(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    refunds: list[dict[str, Any]] = []
    async with start_bot(slack, _ops(refunds), store, env=_api_env(tmp_path)) as bot:
        ts, _ = await _card(bot)
        [run] = (await bot.agent.list_suspended_runs()).runs
        ids = {"runId": run.run_id, "toolCallId": run.tool_calls[0].tool_call_id}
        body = {**ids, "withdrawn": True, "reason": "wrong order"}

        status, answer = await _post(bot, "decline-tool-call", "sam-token", body)
        assert (status, answer["rule"]) == (403, "not-requester")
        status, answer = await _post(bot, "decline-tool-call", "alex-token", body)
        assert status == 200, answer

        assert refunds == [] and (await bot.agent.list_suspended_runs()).total == 0
        [card] = bot.cards(ts)
        assert "↩️ Withdrawn" in _text(card)


# -- authority at decision time, across a restart with other APPROVERS ---------------------------


async def test_an_approval_by_someone_dropped_from_approvers_no_longer_counts_after_a_restart(
    slack: FakeSlackAPI,
    storage: Storage,  # noqa: F811
    executions: Executions,
    tmp_path: Path,
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text('[[rules]]\ntools = ["delete_record"]\napprovals = 2\n', encoding="utf-8")
    env = {"POLICY_FILE": str(policy), "APPROVERS": "U5,U6,U7"}
    first, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, first, storage, env=env) as bot:
        ts = await bot.mention("delete record 7", user=ALEX)
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U5")
        await bot.settle()

    restarted, _ = make_agent([reply("Deleted 7.")], executions)
    async with start_bot(slack, restarted, storage, env={**env, "APPROVERS": "U6,U7"}) as bot:
        await bot.click(card, APPROVE_ACTION, user="U6")
        await bot.settle()
        assert executions.of("delete_record") == []
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.approved_by == ["U6"]
        [shown] = bot.cards(ts)
        assert "1 of 2 approvals: <@U6>" in _text(shown) and "U5" not in _text(shown)
        await bot.click(card, APPROVE_ACTION, user="U7")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]


async def test_an_edit_whose_rule_names_other_approvers_does_not_count_the_editor(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(
        '[[rules]]\ntools = ["refund"]\nargs_above = { amount = 1000 }\napprovers = ["U9"]\n',
        encoding="utf-8",
    )
    refunds: list[dict[str, Any]] = []
    env = {"POLICY_FILE": str(policy)}
    async with start_bot(slack, _ops(refunds), store, env=env) as bot:
        ts, card = await _card(bot)
        await _edit(bot, card, "1150")
        assert refunds == []
        _, new = bot.cards(ts)
        assert "<@U9>" in _text(new)  # who may approve the edited call
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert (pending.approvals_required, pending.approved_by) == (1, [])
        await bot.click(new, APPROVE_ACTION, user=SAM)
        await bot.settle()
        assert refunds == []
        await bot.click(new, APPROVE_ACTION, user="U9")
        await bot.settle()
        assert refunds == [{"order": 49, "amount": 1150}]


class _Tools:
    """Tools offered besides the agent's own, replaceable (as an MCP server's are)."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def current_tools(self) -> Mapping[str, Tool]:
        return {"transfer": self.tool}


def _transfer(moved: list[int], description: str, factor: int = 1) -> Tool:
    class TransferInput(BaseModel):
        account: str
        amount: int

    async def transfer(input: TransferInput, ctx: ToolContext) -> str:
        moved.append(input.amount * factor)
        return "moved"

    return create_tool(
        id="transfer",
        description=description,
        input_schema=TransferInput,
        execute=transfer,
        require_approval=True,
    )


async def test_an_api_approval_of_a_redefined_tool_is_409_and_slack_shows_the_new_card(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    moved: list[int] = []
    tools = _Tools(_transfer(moved, "Move money"))
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("transfer", {"account": "A-1", "amount": 5}), reply("Moved.")]),
    )
    env = {"API_TOKENS": tokens_file(tmp_path, API_PEOPLE)}
    async with start_bot(slack, agent, store, env=env, tools=tools) as bot:
        ts = await bot.mention("move 5 from A-1", user=ALEX)
        await bot.settle()
        [run] = (await bot.agent.list_suspended_runs()).runs
        ids = {"runId": run.run_id, "toolCallId": run.tool_calls[0].tool_call_id}
        tools.tool = _transfer(moved, "Move money, times 1000", factor=1000)

        status, answer = await _post(bot, "approve-tool-call", "sam-token", ids)

        assert (status, answer["code"]) == (409, "APPROVAL_TOOL_CHANGED") and moved == []
        old, new = bot.cards(ts)
        assert "Replaced" in _text(old) and "tool changed" in _text(old)
        assert _digest(new) == tools.tool.definition_digest
        await bot.click(new, APPROVE_ACTION, user=SAM)
        await bot.settle()
        assert moved == [5000] and bot.texts(ts)[-1] == "Moved."
