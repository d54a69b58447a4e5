"""The holes a hostile run found in round 3 through the bot's surfaces (SPEC 3.3 "One gate",
11, 15); each test here failed before the gate was one:

- "Approve all" counted a quorum approver removed from the approver group;
- a grant made under a lenient rule approved calls that fall under a stricter ``args_above``
  rule;
- the grant modal accepted what the API refuses (a forged Submit of 1e10 s and 10⁹ uses);
- an escalation step redrew a batch card as the single card of the escalated call.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, Approve, GrantRequest
from agents.models import ScriptedModel, call, calls, reply
from bot import APPROVE_ACTION, load_settings
from bot._assembly import serve_agent
from bot.background._periodic import sweep
from bot.slack._ids import APPROVE_ALL_ACTION, GRANT_ACTION, GRANT_VIEW, ROW_ACTION
from bot.slack.blocks.standing._grant_modal import DURATION_BLOCK, SCOPE_BLOCK, USES_BLOCK
from storage import InMemoryStorage, Storage
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tools import ToolContext, create_tool


def _policy(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "countersign.toml"
    path.write_text(text, encoding="utf-8")
    return {"POLICY_FILE": str(path)}


def _live(card: PostedMessage) -> list[str]:
    """The card's buttons, and ``approval:approve`` for each row whose menu approves."""
    buttons = [e["action_id"] for b in card.blocks if b["type"] == "actions" for e in b["elements"]]
    rows = [
        APPROVE_ACTION
        for b in card.blocks
        if b.get("accessory", {}).get("action_id") == ROW_ACTION
        and any(json.loads(o["value"])["k"] == "approve" for o in b["accessory"]["options"])
    ]
    return rows + buttons


async def _click_row(bot: Bot, card: PostedMessage, row: int | str, action: str, user: str) -> None:
    """Approve in row ``row``'s menu (from 1), or click ``action`` ("Approve all")."""
    if row == "all":
        holding = [b for b in card.blocks if b.get("block_id") == "batch:all"]
        card = dataclasses.replace(
            card, blocks=holding + [b for b in card.blocks if b not in holding]
        )
        response = await bot.click(card, action, user=user)
    else:
        response = await bot.choose(card, int(row), "approve", user=user)
    assert response.status == 200
    await bot.settle()


TWO_DELETES = [
    calls(call("delete_record", {"id": "3"}, id="c3"), call("delete_record", {"id": "4"}, id="c4")),
    reply("done"),
]


async def test_approve_all_does_not_count_an_approver_removed_from_the_group(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    slack.usergroups["S1"] = ["U2", "U3"]
    env = _policy(tmp_path, '[[rules]]\ntools = ["delete-*"]\napprovals = 2\napprovers = ["S1"]\n')
    agent, _ = make_agent(TWO_DELETES, executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete 3 and 4", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        await _click_row(bot, card, 1, APPROVE_ACTION, user="U2")  # 1 of 2 for the first call

        slack.usergroups["S1"] = ["U3"]  # U2 leaves the approvers' group
        event = {"type": "subteam_members_changed", "subteam_id": "S1", "removed_users": ["U2"]}
        assert (await bot.send_event(event)).status == 200
        [card] = bot.cards(ts)
        await _click_row(bot, card, "all", APPROVE_ALL_ACTION, user="U3")

        assert executions.of("delete_record") == []  # U2 no longer counts: 1 of 2 each
        [run] = (await bot.agent.list_suspended_runs()).runs
        assert {p.tool_call_id: p.approved_by for p in run.tool_calls} == {
            "c3": ["U3"],
            "c4": ["U3"],
        }


class PayInput(BaseModel):
    payee: str
    amount: float


STRICT_AND_LENIENT = """
[[rules]]
tools = ["pay"]
args_above = { amount = 1000 }
grants = { max_seconds = 120, max_uses = 1 }

[[rules]]
tools = ["pay"]
grants = { max_seconds = 3600, max_uses = 3 }
"""


async def test_a_grant_made_under_a_lenient_rule_approves_nothing_under_a_stricter_one(
    tmp_path: Path,
) -> None:
    paid: list[float] = []

    async def pay(input: PayInput, ctx: ToolContext) -> dict[str, Any]:
        paid.append(input.amount)
        return {"paid": input.amount}

    tool = create_tool(
        id="pay", description="Pay", input_schema=PayInput, execute=pay, require_approval=True
    )
    script: list[Any] = [call("pay", {"payee": "acme", "amount": 5}), reply("paid 5")]
    script += [call("pay", {"payee": "acme", "amount": a}) for a in (5000, 6000)]  # they wait
    settings = load_settings({**_policy(tmp_path, STRICT_AND_LENIENT), "APPROVERS": "U2"})
    store = InMemoryStorage()
    agent = serve_agent(
        Agent(id="ops", model=ScriptedModel(script), tools=[tool]),
        settings=settings,
        storage=store,
        client=AsyncWebClient(token="xoxb-test", base_url="http://127.0.0.1:9/"),
    ).agent
    where = {"thread_id": "T1", "resource_id": "C1", "requested_by": "U1"}

    first = await agent.generate("pay 5", **where)
    grant = GrantRequest(seconds=3600, max_uses=3, free_args=("amount",))
    await (await agent.decide(Approve(grant=grant), run_id=first.run_id, decided_by="U2")).result()
    big = await agent.generate("pay 5000", **where)
    bigger = await agent.generate("pay 6000", **where)

    assert paid == [5]
    assert (big.finish_reason, bigger.finish_reason) == ("suspended", "suspended")


async def test_the_grant_modal_refuses_what_the_api_refuses(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    ran: list[str] = []

    class Target(BaseModel):
        id: str

    async def purge(input: Target, ctx: ToolContext) -> str:
        ran.append(input.id)
        return "purged"

    tool = create_tool(
        id="purge",
        description="Purge",
        input_schema=Target,
        execute=purge,
        require_approval=True,
        grants=True,  # no rule: no bounds of its own
    )
    agent = Agent(
        id="ops", model=ScriptedModel([call("purge", {"id": "a"}), reply("ok")]), tools=[tool]
    )
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("purge a", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert (await bot.click(card, GRANT_ACTION, user="U2")).status == 200
        await bot.settle()
        view = bot.opened_views()[-1]
        assert view["callback_id"] == GRANT_VIEW
        forged = {
            DURATION_BLOCK: {"value": {"selected_option": {"value": "1e10"}}},
            USES_BLOCK: {"value": {"selected_option": {"value": str(10**9)}}},
            SCOPE_BLOCK: {"value": {"selected_option": {"value": "thread"}}},
        }
        await bot.submit(view, forged, user="U2")
        await bot.settle()

        assert await bot.agent.list_grants(active_only=False) == []
        assert ran == []  # nothing recorded: the call still waits
        [told] = slack.calls_to("chat.postEphemeral")
        assert told["user"] == "U2"


ESCALATING = """
[[rules]]
tools = ["delete-*"]
approvers = ["U2"]
ttl_seconds = 7200
escalate = [{ after = "15m", approvers = ["U7"], notify = ["U7"] }]
"""


async def test_an_escalation_step_redraws_a_batch_card_as_the_batch(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent(TWO_DELETES, executions)
    async with start_bot(slack, agent, store, env=_policy(tmp_path, ESCALATING)) as bot:
        ts = await bot.mention("delete 3 and 4", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert _live(card).count(APPROVE_ACTION) == 2
        [run] = (await bot.agent.list_suspended_runs()).runs
        start = min(p.suspended_at for p in run.tool_calls if p.suspended_at is not None)

        await sweep(bot.services, now=start + timedelta(minutes=16))
        await bot.settle()

        [card] = bot.cards(ts)
        text = json.dumps(card.blocks)
        assert _live(card).count(APPROVE_ACTION) == 2  # both rows keep their buttons
        assert APPROVE_ALL_ACTION in _live(card)
        assert "`3`" in text and "`4`" in text
