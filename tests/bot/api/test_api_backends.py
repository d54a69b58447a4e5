"""The API over every storage backend: edge-of-valid input is stored, never a 5xx.

PostgreSQL is the strictest backend (``varchar(255)`` ids, no NUL in text columns); the API's
limits are chosen so that whatever it accepts, every backend can keep.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agents.models import reply
from bot.client import Client
from storage import Storage
from tests.backends import BACKENDS, open_storage, unique_url
from tests.bot.api.fixtures import AGENT_ID, TOKEN, api_harness, delete_call, ticket_call

APPROVE = f"/api/agents/{AGENT_ID}/approve-tool-call"
DECLINE = f"/api/agents/{AGENT_ID}/decline-tool-call"
RESUME = f"/api/agents/{AGENT_ID}/resume"
LIST = f"/api/agents/{AGENT_ID}/suspended-runs"

LONGEST_ID = "𝄞" * 255
"""255 characters, 4 UTF-8 bytes each: the widest id every backend stores."""


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """An open, isolated store of each backend in turn (PostgreSQL/Redis when configured)."""
    async with unique_url(request.param, tmp_path) as url, open_storage(url) as store:
        yield store


async def test_a_full_approval_cycle_and_its_audit_on_each_backend(backend: Storage) -> None:
    script = [delete_call("a", "c1"), reply("Deleted.")]
    async with api_harness(backend, script) as api, Client(api.base_url, TOKEN) as client:
        first = await api.suspend(thread_id="t1", resource_id="u1")
        ops = client.agent(AGENT_ID)
        page = await ops.list_suspended_runs(thread_id="t1", page=0, per_page=10)
        assert [r.run_id for r in page.runs] == [first.run_id] and page.total == 1
        done = await ops.approve_tool_call(
            run_id=first.run_id, tool_call_id="c1", decided_by=LONGEST_ID, wait=True
        )
        assert done.text == "Deleted."
        again = await api.call("POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1"})
        assert again.status == 409 and (await again.json())["decidedBy"] == LONGEST_ID
        decided = [e for e in await backend.query_audit(run_id=first.run_id) if e.kind == "decided"]
        assert [(e.source, e.actor) for e in decided] == [("api", LONGEST_ID)]


async def test_edge_of_valid_input_is_kept_or_refused_with_a_4xx_on_each_backend(
    backend: Storage,
) -> None:
    script = [delete_call("a", "c1"), reply("ok"), ticket_call("printer", "t1")]
    async with api_harness(backend, script) as api:
        first = await api.suspend()
        for params, status in (
            ({"threadId": LONGEST_ID}, 200),
            ({"threadId": LONGEST_ID + "x"}, 400),
            ({"resourceId": "ünïcödé ✓", "page": "1000000", "perPage": "500"}, 200),
        ):
            assert (await api.call("GET", LIST, params=params)).status == status
        for run_id, status in ((LONGEST_ID, 404), (LONGEST_ID + "x", 400)):
            response = await api.call("POST", APPROVE, json={"runId": run_id, "toolCallId": "c1"})
            assert response.status == status
        edited = {"id": "nul\x00 and 𝄞 and \u2028"}
        response = await api.call(
            "POST",
            APPROVE,
            params={"wait": "true"},
            json={"runId": first.run_id, "toolCallId": "c1", "args": edited},
        )
        assert response.status == 200, await response.text()
        assert api.executions.of("delete-record") == [edited]

        ticket = await api.suspend()
        deep: object = {"priority": "low"}
        for _ in range(300):
            deep = [deep]
        body = json.dumps({"runId": ticket.run_id, "toolCallId": "t1", "resumeData": deep})
        response = await api.call("POST", RESUME, data=body)
        assert response.status == 422
        big = {"priority": "low", "note": "x" * 200_000, "n": 10**40}
        response = await api.call(
            "POST", RESUME, json={"runId": ticket.run_id, "toolCallId": "t1", "resumeData": big}
        )
        assert response.status == 200, await response.text()
