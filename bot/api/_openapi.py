"""The OpenAPI 3.1 description of ``/api``, generated from the pydantic models of the wire.

Example:
    >>> doc = openapi_document()
    >>> doc["openapi"]
    '3.1.0'
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from bot.api._gate import GATE, GateOut, GateRequest
from bot.api._grant_schemas import GrantOut, GrantsOut, GrantsQuery, RevokeGrantRequest
from bot.api._schemas import (
    ApproveRequest,
    DecideManyOut,
    DecideManyRequest,
    DecisionOut,
    DecisionQuery,
    DeclineRequest,
    ErrorOut,
    ExtendRequest,
    PendingToolCallOut,
    ResumeRequest,
    SuspendedRunsPageOut,
    SuspendedRunsQuery,
)

API_PREFIX = "/api"
AGENT_PATH = "/agents/{agent_id}"
SUSPENDED_RUNS = AGENT_PATH + "/suspended-runs"
PENDING_CALL = AGENT_PATH + "/pending-calls/{run_id}/{tool_call_id}"
APPROVE = AGENT_PATH + "/approve-tool-call"
DECLINE = AGENT_PATH + "/decline-tool-call"
RESUME = AGENT_PATH + "/resume"
DECIDE_MANY = AGENT_PATH + "/decide-many"
EXTEND = AGENT_PATH + "/extend-tool-call"
OPENAPI = "/openapi.json"
GRANTS = AGENT_PATH + "/grants"
REVOKE_GRANT = AGENT_PATH + "/revoke-grant"

_REF = "#/components/schemas/{model}"
_STATUS_TEXT = {
    "400": "Malformed JSON, wrong body shape or bad query parameters (code INVALID_REQUEST or "
    "MALFORMED_JSON), or a quorum approval naming no one (AGENT_CONFIG_INVALID)",
    "401": "Missing or unknown token: neither API_TOKEN nor one of API_TOKENS (code UNAUTHORIZED)",
    "403": "A standing grant the call's rule does not allow (GRANT_NOT_ALLOWED), or "
    "not allowed to decide (APPROVAL_NOT_ALLOWED, with the rule that refused and the "
    "reason): self-approval (the requester approving their own call), not-approver (only the "
    "rule's approvers decide it), needs-person (the service token decides as no person, and "
    "the call needs one: a quorum's approval, or a call only named approvers decide), "
    "other-person (a per-person token sent someone else's decidedBy); nothing was claimed",
    "404": "Unknown agent (AGENT_NOT_FOUND) or run (AGENT_RESUME_NO_SNAPSHOT_FOUND)",
    "409": "The call cannot take this decision: already decided (APPROVAL_ALREADY_DECIDED, "
    "with decidedBy/decidedAt/decision), expired (APPROVAL_EXPIRED), fingerprint mismatch "
    "(APPROVAL_FINGERPRINT_MISMATCH), the same approver twice (APPROVAL_DUPLICATE_APPROVER), "
    "or not suspended / waiting for another kind of decision "
    "(AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED), or an extend its rule does not allow "
    "(APPROVAL_CANNOT_EXTEND: no max_ttl_seconds, or at it already)",
    "413": "The body is larger than the server accepts (code PAYLOAD_TOO_LARGE)",
    "422": "Data that fails the tool's schema (AGENT_RESUME_INVALID_DATA, APPROVAL_INVALID_ARGS);"
    " nothing was claimed, the call is still pending; or a decide-many body naming a call twice"
    " (INVALID_REQUEST)",
}


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The whole description (built once; treat it as read-only)."""
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (ApproveRequest, "validation"),
        (DeclineRequest, "validation"),
        (ExtendRequest, "validation"),
        (ResumeRequest, "validation"),
        (DecideManyRequest, "validation"),
        (DecideManyOut, "serialization"),
        (SuspendedRunsPageOut, "serialization"),
        (PendingToolCallOut, "serialization"),
        (DecisionOut, "serialization"),
        (ErrorOut, "serialization"),
        (GrantsOut, "serialization"),
        (GrantOut, "serialization"),
        (RevokeGrantRequest, "validation"),
        (GateRequest, "validation"),
        (GateOut, "serialization"),
    ]
    refs, top = models_json_schema(models, ref_template=_REF)
    schemas: dict[str, Any] = top.get("$defs", {})

    def ref(model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
        return dict(refs[(model, mode)])

    error = ref(ErrorOut, "serialization")
    decision = ref(DecisionOut, "serialization")
    many = ref(DecideManyOut, "serialization")
    agent_param = {
        "name": "agent_id",
        "in": "path",
        "required": True,
        "description": "The id of a served agent",
        "schema": {"type": "string", "minLength": 1, "pattern": "^[^/]+$"},
    }
    wait = _query_parameters(DecisionQuery)
    decide_errors = ("400", "401", "403", "404", "409", "413", "422")

    def post(
        summary: str,
        body: type[BaseModel],
        description: str,
        answer: dict[str, Any] = decision,
        ok: str = "Claimed; the run continues in the background",
    ) -> dict[str, Any]:
        waits = wait if answer is decision or answer is many else []
        return {
            "post": {
                "summary": summary,
                "description": description,
                "operationId": summary.replace(" ", "_").lower(),
                "parameters": [agent_param, *waits],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": ref(body, "validation")}},
                },
                "responses": {
                    "200": _json(ok, answer),
                    **{s: _json(_STATUS_TEXT[s], error, s) for s in decide_errors},
                },
            }
        }

    paths = {
        API_PREFIX + SUSPENDED_RUNS: {
            "get": {
                "summary": "List suspended runs",
                "description": "Runs of the agent waiting for decisions, newest first, with "
                "their pending calls. Without page/perPage every run is returned.",
                "operationId": "list_suspended_runs",
                "parameters": [agent_param, *_query_parameters(SuspendedRunsQuery)],
                "responses": {
                    "200": _json("A page of runs", ref(SuspendedRunsPageOut, "serialization")),
                    **{s: _json(_STATUS_TEXT[s], error, s) for s in ("400", "401", "404")},
                },
            }
        },
        API_PREFIX + PENDING_CALL: {
            "get": {
                "summary": "Get a pending call",
                "description": "One pending call of a run, in one read: every field a card "
                "shows (404 PENDING_CALL_NOT_FOUND once it was decided, or if it never was).",
                "operationId": "pending_call",
                "parameters": [
                    agent_param,
                    *(
                        {
                            "name": name,
                            "in": "path",
                            "required": True,
                            "description": what,
                            "schema": {"type": "string", "minLength": 1, "pattern": "^[^/]+$"},
                        }
                        for name, what in (
                            ("run_id", "The run holding the call"),
                            ("tool_call_id", "The pending call"),
                        )
                    ),
                ],
                "responses": {
                    "200": _json("The pending call", ref(PendingToolCallOut, "serialization")),
                    "401": _json(_STATUS_TEXT["401"], error, "401"),
                    "404": _json(
                        "Unknown agent, or no such call pending (PENDING_CALL_NOT_FOUND)", error
                    ),
                },
            }
        },
        API_PREFIX + APPROVE: post(
            "Approve tool call",
            ApproveRequest,
            "Claim the pending call as approved (optionally with edited args); it runs and the "
            "run continues. The decision is single-use.",
        ),
        API_PREFIX + DECLINE: post(
            "Decline tool call",
            DeclineRequest,
            "Claim the pending call as declined: it never runs; the model is told, with the "
            "reason, and answers.",
        ),
        API_PREFIX + RESUME: post(
            "Resume tool call",
            ResumeRequest,
            "Give a call that suspended itself the data it asked for (validated against its "
            "resumeSchema); the tool runs again with it.",
        ),
        API_PREFIX + DECIDE_MANY: post(
            "Decide many tool calls",
            DecideManyRequest,
            "Approve or decline several pending calls of one run in one transaction, all or "
            "nothing: when any is refused (already decided, expired, not allowed, fingerprint "
            "or definition changed, the same approver twice) none is recorded and the error "
            "names that call (toolCallId). Each approval counts toward its own call's quorum; "
            "the run goes on once every call of its step is resolved.",
            many,
        ),
        API_PREFIX + EXTEND: post(
            "Extend tool call",
            ExtendRequest,
            'Keep a pending approval decidable for longer (SPEC 12 "Extend"): its expiresAt '
            "moves by its rule's TTL once more, never past the rule's max_ttl_seconds after it was "
            "asked; audited (extended). Whoever may approve the call may extend it. Answers "
            "the call as it now stands; nothing is decided.",
            ref(PendingToolCallOut, "serialization"),
            "Extended: the call as it now stands",
        ),
        API_PREFIX + OPENAPI: {
            "get": {
                "summary": "This description",
                "operationId": "openapi",
                "responses": {
                    "200": {
                        "description": "OpenAPI 3.1 document",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    "401": _json(_STATUS_TEXT["401"], error, "401"),
                },
            }
        },
    }
    errors = {s: _json(_STATUS_TEXT[s], error, s) for s in ("400", "401", "404")}
    paths[API_PREFIX + GRANTS] = {
        "get": {
            "summary": "List standing grants",
            "description": "The agent's grants usable now, newest first; with threadId and "
            "resourceId those that apply in that thread (SPEC 15).",
            "operationId": "list_grants",
            "parameters": [agent_param, *_query_parameters(GrantsQuery)],
            "responses": {"200": _json("The grants", ref(GrantsOut, "serialization")), **errors},
        }
    }
    paths[API_PREFIX + REVOKE_GRANT] = {
        "post": {
            "summary": "Revoke a standing grant",
            "description": "It approves nothing more, from any instance, at once. Only its "
            "grantor or an approver of its rule (else 403 GRANT_NOT_ALLOWED; an unknown grant "
            "is 404 GRANT_NOT_FOUND).",
            "operationId": "revoke_grant",
            "parameters": [agent_param],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ref(RevokeGrantRequest, "validation")}},
            },
            "responses": {
                "200": _json("The revoked grant", ref(GrantOut, "serialization")),
                "403": _json("Not the grantor nor an approver (GRANT_NOT_ALLOWED)", error, "403"),
                "413": _json(_STATUS_TEXT["413"], error, "413"),
                **errors,
            },
        }
    }
    paths[API_PREFIX + GATE] = {
        "post": {
            "summary": "Ask the gate",
            "description": "A coding agent's hook asks whether one of its tool calls may run "
            "(SPEC 17): allowed at once, or held as a pending call of the agent `gateway` "
            "(requested by the token's person) and waited on up to waitSeconds. The identical "
            "call asked again waits on the same card; an approval is answered once. Only a "
            "person's token (403 PERSON_TOKEN_REQUIRED for the service token); 404 when the "
            "bot's gateway is off.",
            "operationId": "gate",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ref(GateRequest, "validation")}},
            },
            "responses": {
                "200": _json("What the call may do now", ref(GateOut, "serialization")),
                "403": _json("A service token (PERSON_TOKEN_REQUIRED)", error, "403"),
                "413": _json(_STATUS_TEXT["413"], error, "413"),
                **errors,
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "countersign API",
            "version": "1",
            "description": "Decide the tool calls an agent waits on from outside Slack. "
            "Every route needs `Authorization: Bearer <token>`: a per-person token (API_TOKENS) "
            "decides as its user; the service token (API_TOKEN) decides as no person, unless "
            "the server sets API_TOKEN_ACTS_FOR_USERS=true, then as its decidedBy.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearerAuth": []}],
    }


def _json(description: str, schema: dict[str, Any], status: str = "200") -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": schema}},
    }
    if status == "401":
        response["headers"] = {
            "WWW-Authenticate": {
                "description": "Always ``Bearer ...``",
                "schema": {"type": "string", "pattern": "^Bearer"},
            }
        }
    return response


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """One optional query parameter per field (``null`` dropped: absent means None)."""
    schema = model.model_json_schema(by_alias=True)
    parameters = []
    for name, prop in schema.get("properties", {}).items():
        prop = dict(prop)
        description = prop.pop("description", None)
        prop.pop("title", None)
        prop.pop("default", None)
        variants = [v for v in prop.pop("anyOf", []) if v.get("type") != "null"]
        if variants:
            prop.update(variants[0])
        parameter = {"name": name, "in": "query", "required": False, "schema": prop}
        if description:
            parameter["description"] = description
        parameters.append(parameter)
    return parameters
