"""One gate (SPEC 3.3): every rule gives the same verdict on every path that decides a call, on
SQLite, PostgreSQL and Redis.

Rows are rule kinds (approvers, user groups, a quorum whose first approver left its group,
``args_above``, confirm, expiry, a redefined tool, escalation, self-approval), each with a
person the rule allows and one it refuses; columns are the decision paths: ``decide`` and
``decide_many`` in Python, the HTTP API's approve and decide-many with that person's token,
the card's Approve button, "Approve all" on a batch card, the Home tab's button, the Edit
modal submitted unchanged, and a standing grant the person made on an earlier call. For each
row, one bot serves every path (a fresh pending call each), and every path must reach the
row's verdict: the tool ran, or nothing ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, AgentError, Approve, GrantRequest, ToolGroups
from agents.models import ModelRequest, ScriptedModel, call, calls, reply
from agents.stored._state import RunState
from bot import APPROVE_ACTION
from bot.background._periodic import sweep
from bot.slack._ids import APPROVE_ALL_ACTION, EDIT_ACTION
from bot.slack.blocks._home_view import HOME_BLOCK_PREFIX
from storage import StateChange, Storage, utcnow
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import Bot, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tools import Tool, ToolContext, create_tool

PEOPLE = {f"token-{u.lower()}": u for u in ("U1", "U2", "U3", "U7", "U9")}
REQUESTER = "U1"


class PayInput(BaseModel):
    payee: str
    amount: float


@dataclass
class World:
    """The bot of one row, what ran, and the pending call of the path being tried."""

    bot: Bot
    slack: FakeSlackAPI
    groups: ToolGroups
    paid: list[str] = field(default_factory=list)
    run_id: str = ""
    ts: str = ""
    redefined: int = 0
    amount: str = "5"

    def tool(self) -> Tool:
        async def pay(input: PayInput, ctx: ToolContext) -> dict[str, Any]:
            self.paid.append(ctx.run_id)
            return {"paid": input.amount}

        return create_tool(
            id="pay",
            description=f"Pay a payee (definition {self.redefined})",
            input_schema=PayInput,
            execute=pay,
            require_approval=True,
            grants=True,
        )


Setup = Callable[[World], Awaitable[None]]


async def _nothing(world: World) -> None:
    """No setup."""


@dataclass(frozen=True)
class Row:
    """A rule kind, the person trying, and the verdict every path must reach."""

    name: str
    policy: str
    person: str
    runs: bool
    amount: int = 5
    groups: dict[str, list[str]] = field(default_factory=dict)
    before: Setup = _nothing
    """What happens between the call's presentation and the attempt."""
    skip: frozenset[str] = frozenset()
    """Paths the rule kind does not apply to."""


GRANTS = "grants = { max_seconds = 3600, max_uses = 5 }"


async def _group_changes(world: World) -> None:
    """U2 approves (1 of 2), then leaves the approvers' group S1."""
    world.slack.usergroups["S1"] = ["U2", "U3"]
    await _members_changed(world)
    stream = await world.bot.agent.decide(
        Approve(), run_id=world.run_id, tool_call_id="c1", decided_by="U2"
    )
    await stream.result()
    world.slack.usergroups["S1"] = ["U3"]
    await _members_changed(world)


async def _members_changed(world: World) -> None:
    event = {"type": "subteam_members_changed", "subteam_id": "S1"}
    assert (await world.bot.send_event(event)).status == 200


async def _expires(world: World) -> None:
    """The call's expiry passes (its stored ``expires_at`` moved into the past)."""
    store = world.bot.services.storage
    record = await store.load_snapshot(world.run_id)
    assert record is not None
    state = RunState.model_validate(record.data)
    past = utcnow() - timedelta(seconds=1)
    state.pending = [p.model_copy(update={"expires_at": past}) for p in state.pending]
    snapshot = dataclasses.replace(record, version=record.version + 1, data=state.to_document())
    await store.commit(StateChange(snapshot=snapshot))


async def _redefine(world: World) -> None:
    """The tool is redefined under the card (as an MCP server's list_changed does)."""
    world.redefined += 1
    world.groups.replace("mcp", [world.tool()])


async def _escalates(world: World) -> None:
    """The rule's escalation step is due and taken (it adds U7 to who may approve)."""
    [run] = [
        r for r in (await world.bot.agent.list_suspended_runs()).runs if r.run_id == world.run_id
    ]
    start = run.tool_calls[0].suspended_at
    assert start is not None
    await sweep(world.bot.services, now=start + timedelta(minutes=16))
    await world.bot.settle()


ESCALATING = f"""
[[rules]]
tools = ["pay"]
approvers = ["U2"]
ttl_seconds = 7200
{GRANTS}
escalate = [{{ after = "15m", approvers = ["U7"], notify = ["U7"] }}]
"""
STRICTER = f"""
[[rules]]
tools = ["pay"]
args_above = {{ amount = 1000 }}
approvers = ["U3"]
{GRANTS}

[[rules]]
tools = ["pay"]
approvers = ["U2"]
{GRANTS}
"""
NO_GRANT = frozenset({"grant"})
APPROVERS = f'[[rules]]\ntools = ["pay"]\napprovers = ["U2"]\n{GRANTS}\n'
GROUP = f'[[rules]]\ntools = ["pay"]\napprovers = ["S1"]\n{GRANTS}\n'
QUORUM = '[[rules]]\ntools = ["pay"]\napprovals = 2\napprovers = ["S1"]\n'
SELF = f'[[rules]]\ntools = ["pay"]\nallow_self_approval = false\n{GRANTS}\n'

ROWS = [
    Row(name="approver", policy=APPROVERS, person="U2", runs=True),
    Row(name="not-an-approver", policy=APPROVERS, person="U9", runs=False),
    Row(name="group-member", policy=GROUP, person="U2", runs=True, groups={"S1": ["U2"]}),
    Row(name="not-a-member", policy=GROUP, person="U9", runs=False, groups={"S1": ["U2"]}),
    Row(
        name="quorum-with-a-removed-approver",
        policy=QUORUM,
        person="U3",
        runs=False,
        groups={"S1": ["U2", "U3"]},
        before=_group_changes,
        skip=NO_GRANT,
    ),
    Row(
        name="args-above-a-stricter-rule",
        policy=STRICTER,
        person="U2",
        runs=False,
        amount=5000,
    ),
    Row(name="args-above-its-approver", policy=STRICTER, person="U3", runs=True, amount=5000),
    Row(
        name="confirm",
        policy='[[rules]]\ntools = ["pay"]\nconfirm = true\napprovers = ["U2"]\n',
        person="U2",
        runs=True,
        skip=NO_GRANT,  # a confirm rule allows no grant
    ),
    Row(name="expired", policy=APPROVERS, person="U2", runs=False, before=_expires, skip=NO_GRANT),
    Row(name="redefined", policy=APPROVERS, person="U2", runs=False, before=_redefine),
    Row(
        name="escalated",
        policy=ESCALATING,
        person="U7",
        runs=True,
        before=_escalates,
        skip=NO_GRANT,
    ),
    Row(name="not-yet-escalated", policy=ESCALATING, person="U7", runs=False),
    Row(name="self-approval", policy=SELF, person=REQUESTER, runs=False),
    Row(name="another-person", policy=SELF, person="U2", runs=True),
]

PATHS = (
    "decide",
    "decide_many",
    "api",
    "api_many",
    "button",
    "approve_all",
    "home",
    "modal",
    "grant",
)


def _script(amount: int) -> ScriptedModel:
    """Any number of runs: each message proposes one call of ``pay`` (``approve all`` two),
    and the answer after a tool's result is a reply."""

    def item(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "tool":
            return reply("done")
        args = {"payee": "acme", "amount": amount}
        if "all" in str(last.content):
            return calls(call("pay", args, id="c1"), call("pay", args, id="c2"))
        return call("pay", args, id="c1")

    return ScriptedModel([item] * 200)


@asynccontextmanager
async def _world(
    row: Row, slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> AsyncIterator[World]:
    policy = tmp_path / "countersign.toml"
    policy.write_text(row.policy, encoding="utf-8")
    env = {"POLICY_FILE": str(policy), "API_TOKENS": tokens_file(tmp_path, PEOPLE)}
    slack.usergroups.update({k: list(v) for k, v in row.groups.items()})
    groups = ToolGroups()
    agent = Agent(id="ops", name="Ops", model=_script(row.amount))
    async with start_bot(slack, agent, store, env=env, tools=groups) as bot:
        world = World(bot=bot, slack=slack, groups=groups, amount=str(row.amount))
        groups.replace("mcp", [world.tool()])
        yield world


async def _present(world: World, text: str = "pay acme") -> None:
    """A person asks; the run's call waits (its id and card recorded in ``world``)."""
    world.ts = await world.bot.mention(text, user=REQUESTER)
    await world.bot.settle()
    runs = (await world.bot.agent.list_suspended_runs()).runs
    world.run_id = max(runs, key=lambda r: r.suspended_at).run_id if runs else ""


def _card(world: World) -> PostedMessage:
    return world.bot.cards(world.ts)[-1]


def _with_first(card: PostedMessage, action_id: str) -> PostedMessage:
    """``card`` with the actions block holding ``action_id`` first (where a click finds it)."""
    holding = [
        b
        for b in card.blocks
        if b["type"] == "actions" and any(e.get("action_id") == action_id for e in b["elements"])
    ]
    rest = [b for b in card.blocks if b not in holding]
    return dataclasses.replace(card, blocks=holding[:1] + rest)


async def _try(world: World, path: str, person: str) -> None:
    """``person`` approves the call (``c1``) through ``path``; a refusal is fine here."""
    bot, run_id = world.bot, world.run_id
    token = f"token-{person.lower()}"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        if path == "decide":
            stream = await bot.agent.decide(
                Approve(), run_id=run_id, tool_call_id="c1", decided_by=person
            )
            await stream.result()
        elif path == "decide_many":
            stream = await bot.agent.decide_many(
                run_id=run_id, decisions={"c1": Approve()}, decided_by=person
            )
            await stream.result()
        elif path == "api":
            await bot.http.post(
                "/api/agents/ops/approve-tool-call",
                json={"runId": run_id, "toolCallId": "c1"},
                headers=headers,
            )
        elif path == "api_many":
            body = {"runId": run_id, "decisions": [{"toolCallId": "c1", "decision": "approve"}]}
            await bot.http.post("/api/agents/ops/decide-many", json=body, headers=headers)
        elif path == "button":
            await bot.click(_with_first(_card(world), APPROVE_ACTION), APPROVE_ACTION, user=person)
        elif path == "approve_all":
            card = _with_first(_card(world), APPROVE_ALL_ACTION)
            await bot.click(card, APPROVE_ALL_ACTION, user=person)
        elif path == "home":
            await bot.open_home(person)
            if any(
                b.get("block_id", "").startswith(HOME_BLOCK_PREFIX)
                for b in bot.slack.homes[person].get("blocks", [])
            ):
                await bot.click_home(f"{HOME_BLOCK_PREFIX}0", APPROVE_ACTION, user=person)
        elif path == "modal":
            opened = len(bot.opened_views())
            await bot.click(_card(world), EDIT_ACTION, user=person)
            await bot.settle()
            if len(bot.opened_views()) > opened:  # refused people get no form
                values = {  # as shown: nothing edited
                    "field:payee": {"value": {"type": "plain_text_input", "value": "acme"}},
                    "field:amount": {"value": {"type": "plain_text_input", "value": world.amount}},
                }
                await bot.submit(bot.opened_views()[-1], values, user=person)
    except AgentError:
        pass
    await bot.settle()


async def _path(world: World, row: Row, path: str) -> bool:
    """Whether the call ran when ``row.person`` approved it through ``path``."""
    if path == "grant":
        return await _granted(world, row)
    await _present(world, "pay acme all" if path == "approve_all" else "pay acme")
    await row.before(world)
    ran_before = list(world.paid)
    await _try(world, path, row.person)
    return len(world.paid) > len(ran_before) and world.run_id in world.paid


async def _granted(world: World, row: Row) -> bool:
    """``row.person`` approves one call with a grant for the channel; whether the grant then
    approves the next call (after the row's setup, run on that next call's rule)."""
    await _present(world)
    grant = GrantRequest(seconds=600, max_uses=5, within="resource", free_args=("amount",))
    try:
        stream = await world.bot.agent.decide(
            Approve(grant=grant), run_id=world.run_id, decided_by=row.person
        )
        await stream.result()
    except AgentError:
        pass
    await world.bot.settle()
    if row.before is _redefine:
        await _redefine(world)
    before = len(world.paid)
    await _present(world)
    ran = len(world.paid) > before
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("backend", SHARED_BACKENDS)
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
async def test_every_path_reaches_the_rules_verdict(
    backend: str, row: Row, slack: FakeSlackAPI, tmp_path: Path
) -> None:
    verdicts: dict[str, bool] = {}
    async with (
        unique_url(backend, tmp_path) as url,
        open_storage(url) as store,
        _world(row, slack, store, tmp_path) as world,
    ):
        for path in PATHS:
            if path not in row.skip:
                verdicts[path] = await _path(world, row, path)
    wrong = {path: ran for path, ran in verdicts.items() if ran != row.runs}
    assert wrong == {}, f"{row.name}: expected runs={row.runs} on every path, got {verdicts}"


def test_the_table_covers_every_rule_kind_and_path() -> None:
    assert len(PATHS) == 9 and len(ROWS) == 14
    assert {r.runs for r in ROWS} == {True, False}  # each kind allows someone, refuses someone
