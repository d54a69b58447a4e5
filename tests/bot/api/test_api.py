"""SPEC 7: the HTTP API — listing, decisions, auth, error statuses, audit source."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic.alias_generators import to_camel
from slack_sdk.web.async_client import AsyncWebClient

from agents import Approve, DecisionRequest, PendingToolCall, TakenDecision, fingerprint
from agents.models import reply
from bot import create_services, load_settings
from bot._assembly import serve_agent
from bot._serve import install_api
from bot.api import add_api_routes
from storage import Storage, create_storage
from tests.bot.api.fixtures import (
    AGENT_ID,
    TOKEN,
    Executions,
    api_harness,
    delete_call,
    make_agent,
    ticket_call,
    trusted,
)

APPROVE = f"/api/agents/{AGENT_ID}/approve-tool-call"
DECLINE = f"/api/agents/{AGENT_ID}/decline-tool-call"
RESUME = f"/api/agents/{AGENT_ID}/resume"
LIST = f"/api/agents/{AGENT_ID}/suspended-runs"


# -- listing -------------------------------------------------------------------------------
async def test_list_returns_pending_calls_in_camel_case_with_total_and_pages(
    store: Storage,
) -> None:
    script = [delete_call(f"r{i}", f"c{i}") for i in range(5)]
    async with api_harness(store, script) as api:
        runs = [
            await api.suspend(
                f"delete r{i}",
                thread_id="t1",
                resource_id="u1",
                requested_by="u1",
                approval_ttl_seconds=600,
            )
            for i in range(3)
        ]
        await api.suspend("delete r3", thread_id="t2", resource_id="u1")
        await api.suspend("delete r4", thread_id="t3", resource_id="u2")

        everything = await (await api.call("GET", LIST)).json()
        assert everything["total"] == 5 and len(everything["runs"]) == 5

        first = await api.call("GET", LIST, params={"threadId": "t1", "page": "0", "perPage": "2"})
        assert first.status == 200 and first.content_type == "application/json"
        page0 = await first.json()
        page1 = await (
            await api.call("GET", LIST, params={"threadId": "t1", "page": "1", "perPage": "2"})
        ).json()
        assert page0["total"] == page1["total"] == 3
        assert len(page0["runs"]) == 2 and len(page1["runs"]) == 1
        listed = {r["runId"] for r in page0["runs"] + page1["runs"]}
        assert listed == {r.run_id for r in runs}

        run = page0["runs"][0]
        assert set(run) == {
            "runId",
            "agentId",
            "threadId",
            "resourceId",
            "suspendedAt",
            "toolCalls",
        }
        assert run["agentId"] == AGENT_ID and run["threadId"] == "t1"
        pending = run["toolCalls"][0]
        assert pending["toolName"] == "delete-record" and pending["requiresApproval"] is True
        assert pending["fingerprint"] == fingerprint("delete-record", pending["args"])
        assert pending["agentPath"] == [AGENT_ID] and pending["suspendPayload"] is None
        runtime_fields = set(PendingToolCall.model_fields)
        spec_fields = runtime_fields | {"definition_digest", "edited_from", "grantable"}
        assert set(pending) == {to_camel(name) for name in spec_fields}  # SPEC 3.3, camelCase
        assert (pending["requestedBy"], pending["approvalsRequired"]) == ("u1", 1)
        assert pending["approvedBy"] == [] and pending["expiresAt"] is not None

        by_resource = await (await api.call("GET", LIST, params={"resourceId": "u2"})).json()
        assert by_resource["total"] == 1
        only_per_page = await (await api.call("GET", LIST, params={"perPage": "1"})).json()
        assert only_per_page["total"] == 5 and len(only_per_page["runs"]) == 1


async def test_one_pending_call_is_read_by_its_ids_and_is_404_once_decided(
    store: Storage,
) -> None:
    async with api_harness(store, [delete_call("r1", "c1"), reply("ok")]) as api:
        first = await api.suspend("delete r1", requested_by="u1")
        path = f"/api/agents/{AGENT_ID}/pending-calls/{first.run_id}/c1"
        response = await api.call("GET", path)
        assert response.status == 200, await response.text()
        pending = await response.json()
        assert (pending["toolCallId"], pending["requestedBy"]) == ("c1", "u1")
        assert pending["fingerprint"] == first.pending[0].fingerprint
        assert (
            await api.call("POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1"})
        ).status == 200
        await api.settle()
        gone = await api.call("GET", path)
        assert (gone.status, (await gone.json())["code"]) == (404, "PENDING_CALL_NOT_FOUND")
        assert (await api.call("POST", path)).status == 405


@pytest.mark.parametrize(
    "params",
    [
        {"page": "-1", "perPage": "2"},
        {"perPage": "0"},
        {"perPage": "x"},
        {"page": "1.5"},
        {"perPage": "100000"},
        {"threadId": ""},
        {"bogus": "1"},
        {"threadId": "a\x00b"},
    ],
)
async def test_bad_query_parameters_are_400_with_the_validation_errors(
    store: Storage, params: dict[str, str]
) -> None:
    async with api_harness(store, []) as api:
        response = await api.call("GET", LIST, params=params)
        body = await response.json()
        assert response.status == 400, body
        assert body["code"] == "INVALID_REQUEST" and body["errors"]


# -- decisions -----------------------------------------------------------------------------
async def test_approve_is_accepted_after_the_claim_and_the_tool_runs_once(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("Deleted.")]) as api:
        first = await api.suspend()
        response = await api.call("POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1"})
        assert response.status == 200
        assert await response.json() == {
            "runId": first.run_id,
            "toolCallId": "c1",
            "status": "accepted",
        }
        claims = await store.list_claims(first.run_id)
        assert [c.decision for c in claims] == ["approved"]
        await api.settle()
        assert api.executions.of("delete-record") == [{"id": "abc"}]
        listing = await (await api.call("GET", LIST)).json()
        assert listing == {"runs": [], "total": 0}


async def test_wait_true_answers_with_the_runs_result(store: Storage) -> None:
    script = [delete_call("abc", "c1"), delete_call("def", "c2"), reply("Both gone.")]
    async with api_harness(store, script) as api:
        first = await api.suspend()
        body = await (
            await api.call(
                "POST",
                APPROVE,
                params={"wait": "true"},
                json={"runId": first.run_id, "toolCallId": "c1"},
            )
        ).json()
        assert body["finishReason"] == "suspended" and body["status"] == "accepted"
        assert [p["toolCallId"] for p in body["pending"]] == ["c2"]
        again = await (
            await api.call(
                "POST",
                APPROVE,
                params={"wait": "1"},
                json={"runId": first.run_id, "toolCallId": "c2"},
            )
        ).json()
        assert (
            again["text"] == "Both gone."
            and again["finishReason"] == "stop"
            and again["pending"] == []
        )


async def test_approve_with_edited_args_runs_the_edited_args(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        response = await api.call(
            "POST",
            APPROVE,
            params={"wait": "true"},
            json={"runId": first.run_id, "toolCallId": "c1", "args": {"id": "xyz"}},
        )
        assert response.status == 200
        assert api.executions.of("delete-record") == [{"id": "xyz"}]


async def test_invalid_edited_args_are_422_and_the_call_stays_pending(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        response = await api.call(
            "POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1", "args": {"id": 42}}
        )
        body = await response.json()
        assert response.status == 422 and body["code"] == "APPROVAL_INVALID_ARGS"
        assert body["errors"][0]["loc"] == ["id"] and body["toolCallId"] == "c1"
        assert await store.list_claims(first.run_id) == []
        ok = await api.call("POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1"})
        assert ok.status == 200


async def test_decline_with_reason_never_runs_the_tool_and_the_model_sees_the_reason(
    store: Storage,
) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("I left it.")]) as api:
        first = await api.suspend()
        response = await api.call(
            "POST",
            DECLINE,
            params={"wait": "true"},
            json={"runId": first.run_id, "toolCallId": "c1", "reason": "wrong record"},
        )
        body = await response.json()
        assert response.status == 200 and body["text"] == "I left it."
        assert api.executions.calls == []
        told = json.loads(api.model.requests[-1].messages[-1].content or "")
        assert told["status"] == "declined" and told["reason"] == "wrong record"


async def test_resume_with_valid_data_runs_the_tool_with_it(store: Storage) -> None:
    async with api_harness(store, [ticket_call("printer", "t1"), reply("Opened.")]) as api:
        first = await api.suspend()
        listing = await (await api.call("GET", LIST)).json()
        pending = listing["runs"][0]["toolCalls"][0]
        assert pending["requiresApproval"] is False
        assert pending["suspendPayload"] == {"question": "Which priority: low or high?"}
        assert pending["resumeSchema"]["properties"]["priority"]["enum"] == ["low", "high"]
        response = await api.call(
            "POST",
            RESUME,
            params={"wait": "true"},
            json={"runId": first.run_id, "toolCallId": "t1", "resumeData": {"priority": "high"}},
        )
        body = await response.json()
        assert response.status == 200 and body["text"] == "Opened."
        assert api.executions.of("open-ticket") == [{"title": "printer", "priority": "high"}]


async def test_resume_with_invalid_data_is_422_and_the_call_stays_suspended(store: Storage) -> None:
    async with api_harness(store, [ticket_call("printer", "t1"), reply("Opened.")]) as api:
        first = await api.suspend()
        response = await api.call(
            "POST",
            RESUME,
            json={"runId": first.run_id, "toolCallId": "t1", "resumeData": {"priority": "urgent"}},
        )
        body = await response.json()
        assert response.status == 422 and body["code"] == "AGENT_RESUME_INVALID_DATA"
        assert body["errors"][0]["loc"] == ["priority"]
        listing = await (await api.call("GET", LIST)).json()
        assert [c["toolCallId"] for c in listing["runs"][0]["toolCalls"]] == ["t1"]
        assert api.executions.calls == []


async def test_approving_a_call_that_waits_for_data_is_409_not_suspended(store: Storage) -> None:
    async with api_harness(store, [ticket_call("printer", "t1")]) as api:
        first = await api.suspend()
        response = await api.call("POST", APPROVE, json={"runId": first.run_id, "toolCallId": "t1"})
        body = await response.json()
        assert response.status == 409 and body["code"] == "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"
        unknown = await api.call("POST", APPROVE, json={"runId": first.run_id, "toolCallId": "zz"})
        assert unknown.status == 409
        assert (await unknown.json())["toolCallId"] == "zz"


async def test_second_approval_is_409_already_decided_with_who_and_when(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        body = {"runId": first.run_id, "toolCallId": "c1", "decidedBy": "alice"}
        assert (await api.call("POST", APPROVE, json=body, params={"wait": "true"})).status == 200
        for path in (APPROVE, DECLINE):
            again = await api.call("POST", path, json={**body, "decidedBy": "bob"})
            detail = await again.json()
            assert again.status == 409 and detail["code"] == "APPROVAL_ALREADY_DECIDED"
            assert detail["decidedBy"] == "alice" and detail["decision"] == "approved"
            assert detail["decidedAt"] and detail["runId"] == first.run_id
        assert api.executions.of("delete-record") == [{"id": "abc"}]


async def test_concurrent_approvals_claim_once_and_run_the_tool_once(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        responses = await asyncio.gather(
            *(
                api.call(
                    "POST",
                    APPROVE,
                    json={"runId": first.run_id, "toolCallId": "c1", "decidedBy": f"u{i}"},
                )
                for i in range(8)
            )
        )
        statuses = sorted(r.status for r in responses)
        assert statuses == [200] + [409] * 7
        await api.settle()
        assert len(api.executions.calls) == 1


async def test_fingerprint_mismatch_is_409_and_nothing_runs(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        wrong = fingerprint("delete-record", {"id": "other"})
        response = await api.call(
            "POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1", "fingerprint": wrong}
        )
        body = await response.json()
        assert response.status == 409 and body["code"] == "APPROVAL_FINGERPRINT_MISMATCH"
        assert body["given"] == wrong and body["expected"] == first.pending[0].fingerprint
        assert await store.list_claims(first.run_id) == []
        right = {
            "runId": first.run_id,
            "toolCallId": "c1",
            "fingerprint": first.pending[0].fingerprint,
        }
        assert (await api.call("POST", APPROVE, json=right, params={"wait": "true"})).status == 200
        assert api.executions.of("delete-record") == [{"id": "abc"}]


async def test_decision_is_audited_with_source_api_and_the_decider_as_actor(store: Storage) -> None:
    script = [delete_call("a", "c1"), reply("ok"), delete_call("b", "c2"), reply("ok")]
    async with api_harness(store, script) as api:
        named = await api.suspend()
        await api.call(
            "POST",
            APPROVE,
            params={"wait": "true"},
            json={"runId": named.run_id, "toolCallId": "c1", "decidedBy": "alice@example.com"},
        )
        anonymous = await api.suspend()
        await api.call(
            "POST",
            DECLINE,
            params={"wait": "true"},
            json={"runId": anonymous.run_id, "toolCallId": "c2", "reason": "no"},
        )
        for run_id, actor in ((named.run_id, "alice@example.com"), (anonymous.run_id, None)):
            decided = [e for e in await store.query_audit(run_id=run_id) if e.kind == "decided"]
            assert [(e.source, e.actor) for e in decided] == [("api", actor)]


# -- auth and mounting ---------------------------------------------------------------------
@pytest.mark.parametrize("token", [None, ""])
async def test_the_api_is_not_mounted_without_a_token(store: Storage, token: str | None) -> None:
    async with api_harness(store, [], token=token) as api:
        for path in (LIST, "/api/openapi.json"):
            response = await api.call("GET", path, token="anything")
            assert response.status == 404
        response = await api.call(
            "POST", APPROVE, json={"runId": "r", "toolCallId": "c"}, token=None
        )
        assert response.status == 404


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": "Bearer "},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": TOKEN},
        {"Authorization": "Bearer é-not-ascii"},
    ],
)
async def test_missing_or_wrong_token_is_401_with_a_bearer_challenge(
    store: Storage, headers: dict[str, str]
) -> None:
    async with api_harness(store, [delete_call("abc", "c1")]) as api:
        first = await api.suspend()
        for method, path, body in (
            ("GET", LIST, None),
            ("GET", "/api/openapi.json", None),
            ("POST", APPROVE, {"runId": first.run_id, "toolCallId": "c1"}),
        ):
            response = await api.call(method, path, json=body, token=None, headers=headers)
            assert response.status == 401
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            assert (await response.json())["code"] == "UNAUTHORIZED"
        assert await store.list_claims(first.run_id) == []


async def test_the_bearer_scheme_is_case_insensitive(store: Storage) -> None:
    async with api_harness(store, []) as api:
        response = await api.call(
            "GET", LIST, token=None, headers={"Authorization": f"bearer {TOKEN}"}
        )
        assert response.status == 200


# -- errors --------------------------------------------------------------------------------
async def test_unknown_agent_is_404_agent_not_found(store: Storage) -> None:
    async with api_harness(store, []) as api:
        for method, path in (
            ("GET", "/api/agents/nobody/suspended-runs"),
            ("POST", "/api/agents/nobody/resume"),
        ):
            response = await api.call(
                method, path, json={"runId": "r", "toolCallId": "c", "resumeData": 1}
            )
            body = await response.json()
            assert response.status == 404 and body["code"] == "AGENT_NOT_FOUND"
            assert body["agentId"] == "nobody"


async def test_unknown_run_is_404_snapshot_not_found(store: Storage) -> None:
    async with api_harness(store, []) as api:
        for path in (APPROVE, DECLINE):
            response = await api.call(
                "POST", path, json={"runId": "never-seen", "toolCallId": "c1"}
            )
            body = await response.json()
            assert response.status == 404 and body["code"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
            assert body["runId"] == "never-seen" and "STORAGE_URL" in body["message"]


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "{",
        "not json",
        '{"runId": "r", "toolCallId": NaN}',
        "[" * 100_000,
        b"\xff\xfe",
        '{"runId": "r", "toolCallId": "c", "args": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
    ids=["empty", "open", "text", "nan", "unclosed", "bytes", "nested-5000"],
)
async def test_malformed_json_is_400(store: Storage, raw: str | bytes) -> None:
    async with api_harness(store, []) as api:
        response = await api.call(
            "POST", APPROVE, data=raw, headers={"Content-Type": "application/json"}
        )
        body = await response.json()
        assert response.status == 400 and body["code"] == "MALFORMED_JSON"


@pytest.mark.parametrize(
    "body",
    [
        [],
        "a string",
        {"toolCallId": "c1"},
        {"runId": 1, "toolCallId": "c1"},
        {"runId": "r", "toolCallId": "c1", "unknown": True},
        {"run_id": "r", "tool_call_id": "c1"},
        {"runId": "r", "toolCallId": "c1", "args": [1]},
        {"runId": "r", "toolCallId": "c1\x00"},
        {"runId": "r", "toolCallId": "c1", "decidedBy": "a\x00b"},
        {"runId": "", "toolCallId": "c1"},
        {"runId": "r" * 10_000, "toolCallId": "c1"},
    ],
)
async def test_wrong_body_shape_is_400_with_the_errors(store: Storage, body: object) -> None:
    async with api_harness(store, []) as api:
        response = await api.call("POST", APPROVE, data=json.dumps(body))
        detail = await response.json()
        assert response.status == 400 and detail["code"] == "INVALID_REQUEST"
        assert detail["errors"]


@pytest.mark.parametrize(
    "resume_data", ['{"priority": "\\ud800"}', '{"\\udfff": 1}', '["ok", ["\\ud800x"]]']
)
async def test_lone_surrogates_are_400_not_a_storage_crash(
    store: Storage, resume_data: str
) -> None:
    async with api_harness(store, [ticket_call("printer", "t1")]) as api:
        first = await api.suspend()
        raw = f'{{"runId": "{first.run_id}", "toolCallId": "t1", "resumeData": {resume_data}}}'
        response = await api.call("POST", RESUME, data=raw)
        assert response.status == 400
        assert (await response.json())["code"] == "INVALID_REQUEST"
        assert await store.list_claims(first.run_id) == []


async def test_nul_characters_inside_free_form_json_are_kept(store: Storage) -> None:
    async with api_harness(store, [delete_call("abc", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        response = await api.call(
            "POST",
            DECLINE,
            params={"wait": "true"},
            json={"runId": first.run_id, "toolCallId": "c1", "reason": "nul \x00 inside"},
        )
        assert response.status == 200


async def test_unknown_api_paths_and_wrong_methods_answer_json(store: Storage) -> None:
    async with api_harness(store, []) as api:
        missing = await api.call("GET", "/api/nothing/here")
        assert missing.status == 404 and (await missing.json())["code"] == "NOT_FOUND"
        wrong = await api.call("GET", APPROVE)
        assert wrong.status == 405 and (await wrong.json())["code"] == "METHOD_NOT_ALLOWED"


async def test_openapi_describes_every_route_with_generated_schemas(store: Storage) -> None:
    async with api_harness(store, []) as api:
        doc = await (await api.call("GET", "/api/openapi.json")).json()
        assert doc["openapi"].startswith("3.1")
        assert set(doc["paths"]) == {
            "/api/agents/{agent_id}/suspended-runs",
            "/api/agents/{agent_id}/pending-calls/{run_id}/{tool_call_id}",
            "/api/agents/{agent_id}/approve-tool-call",
            "/api/agents/{agent_id}/decline-tool-call",
            "/api/agents/{agent_id}/resume",
            "/api/agents/{agent_id}/decide-many",
            "/api/agents/{agent_id}/extend-tool-call",
            "/api/agents/{agent_id}/grants",
            "/api/agents/{agent_id}/revoke-grant",
            "/api/openapi.json",
            "/api/gate",
        }
        schemas = doc["components"]["schemas"]
        assert schemas["ApproveRequest"]["required"] == ["runId", "toolCallId"]
        assert "resumeData" in schemas["ResumeRequest"]["required"]
        assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


async def test_decisions_work_on_a_sqlite_file(tmp_path: Path) -> None:
    sqlite = create_storage("sqlite+aiosqlite:///" + str(tmp_path / "x.db"))
    try:
        async with api_harness(sqlite, [delete_call("abc", "c1"), reply("Deleted.")]) as api:
            first = await api.suspend(thread_id="t1")
            listing = await (await api.call("GET", LIST, params={"threadId": "t1"})).json()
            assert listing["total"] == 1
            response = await api.call(
                "POST",
                APPROVE,
                params={"wait": "true"},
                json={"runId": first.run_id, "toolCallId": "c1", "decidedBy": "alice"},
            )
            assert (await response.json())["text"] == "Deleted."
            again = await api.call(
                "POST", APPROVE, json={"runId": first.run_id, "toolCallId": "c1"}
            )
            assert again.status == 409 and (await again.json())["decidedBy"] == "alice"
            decided = [
                e for e in await sqlite.query_audit(run_id=first.run_id) if e.kind == "decided"
            ]
            assert [(e.source, e.actor) for e in decided] == [("api", "alice")]
            assert api.executions.of("delete-record") == [{"id": "abc"}]
    finally:
        await sqlite.close()


@pytest.mark.parametrize("env_token", [TOKEN, None])
async def test_install_api_mounts_the_bots_agent_only_when_api_token_is_set(
    store: Storage, env_token: str | None
) -> None:
    env = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "s"}
    if env_token is not None:
        env["API_TOKEN"] = env_token
    agent, _ = make_agent(store, Executions(), [])
    settings, client = load_settings(env), AsyncWebClient(token="xoxb-test")
    served = serve_agent(agent, settings=settings, storage=store, client=client)
    services = create_services(
        agent=served.agent,
        policy=served.policy,
        client=client,
        settings=settings,
    )
    app = web.Application()
    install_api(app, services)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get(LIST, headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status == (200 if env_token else 404)


async def test_a_body_over_the_size_limit_is_413_json(store: Storage) -> None:
    async with api_harness(store, []) as api:
        body = {"runId": "r", "toolCallId": "c", "resumeData": "x" * (1024**2 + 1)}
        raw = io.BytesIO(json.dumps(body).encode())
        response = await api.call("POST", RESUME, data=raw)
        assert response.status == 413
        assert (await response.json())["code"] == "PAYLOAD_TOO_LARGE"


async def test_the_decision_hook_is_told_the_request_the_api_claimed(store: Storage) -> None:
    told: list[TakenDecision] = []

    async def on_decision(taken: TakenDecision) -> None:
        told.append(taken)

    agent, _ = make_agent(store, Executions(), [delete_call("abc", "c1"), reply("Deleted.")])
    app = web.Application()
    add_api_routes(app, {agent.id: agent}, trusted(TOKEN), on_decision=on_decision)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        first = await agent.generate("go")
        shown = fingerprint("delete-record", {"id": "abc"})
        body = {"runId": first.run_id, "toolCallId": "c1", "fingerprint": shown, "decidedBy": "U7"}
        response = await client.post(
            APPROVE, json=body, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert response.status == 200, await response.text()
        [taken] = told
        assert taken.request == DecisionRequest(
            run_id=first.run_id, tool_call_id="c1", fingerprint=shown, decided_by="U7", source="api"
        )
        assert taken.decision == Approve()
        assert (await taken.stream.result()).text == "Deleted."
