"""The JSON arguments ``RedisStorage`` hands its Lua scripts (``storage.redis._scripts``).

Scores travel as strings (Lua numbers would round microsecond timestamps), optional ids as
``""`` for None and ``"=" + id`` otherwise, and absent parts are left out (``cjson`` turns a
JSON ``null`` into a value Lua counts as true).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from storage import _codec as codec
from storage._change import BatchRefusal, Completion, DecisionBatch, StateChange, fenced
from storage._errors import GrantUnavailable, SnapshotVersionConflict
from storage._records import ApprovalRecord, AuditEvent, ClaimRecord, SnapshotRecord, utcnow
from storage.redis._grants import grant_args


def member(run_id: str, key: str) -> str:
    """The member naming one claim in the unfinished and leases zsets (JSON keeps ids apart)."""
    return json.dumps([run_id, key], separators=(",", ":"))


def opt(value: str | None) -> str:
    """An optional id as a script argument: ``""`` for None, ``"=" + id`` otherwise."""
    return "" if value is None else f"={value}"


def lease_score(lease_until: datetime | None) -> str:
    """A claim's score in the leases zset: its lease end, 0 (long expired) without one."""
    return "0" if lease_until is None else str(codec.score(lease_until))


def snapshot_args(prefix: str, record: SnapshotRecord) -> dict[str, str]:
    """What ``write_snapshot`` in the scripts needs to store and index ``record``."""
    return {
        "key": f"{prefix}snap:{record.run_id}",
        "run": record.run_id,
        "expected": str(record.version - 1),
        "version": str(record.version),
        "doc": codec.dumps(record),
        "agent": record.agent_id,
        "thread": opt(record.thread_id),
        "resource": opt(record.resource_id),
        "score": str(codec.score(record.suspended_at)),
        "decidable": "1" if record.decidable else "0",
        "due": "" if record.due_at is None else str(codec.score(record.due_at)),
    }


def audit_indexes(prefix: str, event: AuditEvent) -> list[str]:
    """The zsets an audit event is indexed in."""
    return [f"{prefix}audit:all"] + [
        f"{prefix}audit:{kind}:{value}"
        for kind, value in (
            ("run", event.run_id),
            ("call", event.tool_call_id),
            ("thread", event.thread_id),
        )
        if value is not None
    ]


def completed(before: str, outcome: Mapping[str, object]) -> str:
    """The JSON of the claim ``before`` once completed with ``outcome``."""
    return codec.dumps(
        dataclasses.replace(
            codec.loads(ClaimRecord, before),
            status="completed",
            outcome=dict(outcome),
            completed_at=utcnow(),
        )
    )


def payload(prefix: str, change: StateChange, befores: list[str | None] | None = None) -> str:
    """The ``COMMIT`` script's argument.

    Without ``befores`` the script completes each claim in place (one round trip); with them
    (each completion's claim JSON as read, after the script answered ``changed``) it checks the
    claim is still that and writes the completed JSON computed here.
    """
    if befores is None:
        at = json.dumps(utcnow().isoformat())
        completions = [
            {
                "hash": f"{prefix}claims:{done.run_id}",
                "key": done.key,
                "outcome": json.dumps(dict(done.outcome), separators=(",", ":")),
                "at": at,
                "member": member(done.run_id, done.key),
                **_fence(done),
            }
            for done in change.completions
        ]
    else:
        completions = [
            {
                "hash": f"{prefix}claims:{done.run_id}",
                "key": done.key,
                "before": before or "",
                "after": "" if before is None else completed(before, done.outcome),
                "member": member(done.run_id, done.key),
                **_fence(done),
            }
            for done, before in zip(change.completions, befores, strict=True)
        ]
    doc: dict[str, Any] = {
        "claims": [_claim_args(prefix, claim) for claim in change.every_claim],
        "completions": completions,
        "messages": [
            {"key": f"{prefix}msgs:{m.thread_id}", "doc": codec.dumps(m)} for m in change.messages
        ],
        "audit": [
            {
                "doc": codec.dumps(e),
                "score": str(codec.score(e.at)),
                "indexes": audit_indexes(prefix, e),
            }
            for e in change.audit
        ],
    }
    if change.snapshot is not None:
        doc["snapshot"] = snapshot_args(prefix, change.snapshot)
    if change.delete_snapshot is not None:
        doc["delete"] = change.delete_snapshot
    if change.thread is not None:
        doc["thread"] = {
            "key": f"{prefix}thread:{change.thread.thread_id}",
            "doc": codec.dumps(change.thread),
        }
    doc.update(grant_args(prefix, change))
    return json.dumps(doc, separators=(",", ":"))


def _claim_args(prefix: str, claim: ClaimRecord) -> dict[str, Any]:
    """What a script needs to take ``claim`` and index it while it is unfinished."""
    return {
        "hash": f"{prefix}claims:{claim.run_id}",
        "key": claim.key,
        "doc": codec.dumps(claim),
        "unfinished": claim.status == "claimed",
        "score": str(codec.score(claim.decided_at)),
        "member": member(claim.run_id, claim.key),
        "lease": lease_score(claim.lease_until),
    }


def approval_field(record: ApprovalRecord) -> str:
    """The field of ``record`` in its run's approvals hash (one per key and approver)."""
    return json.dumps([record.key, record.approver], separators=(",", ":"))


def batch_payload(prefix: str, batch: DecisionBatch) -> str:
    """The ``COMMIT_BATCH`` script's argument."""
    doc = {
        "approvals": [
            {
                "claims": f"{prefix}claims:{a.run_id}",
                "approvals": f"{prefix}approvals:{a.run_id}",
                "key": a.key,
                "field": approval_field(a),
                "doc": codec.dumps(a),
            }
            for a in batch.approvals
        ],
        "claims": [_claim_args(prefix, c) for c in batch.claims],
        "audit": [
            {
                "doc": codec.dumps(e),
                "score": str(codec.score(e.at)),
                "indexes": audit_indexes(prefix, e),
            }
            for e in batch.audit
        ],
    }
    return json.dumps(doc, separators=(",", ":"))


def batch_refusal(batch: DecisionBatch, reply: list[Any]) -> BatchRefusal | None:
    """The refusal ``COMMIT_BATCH`` answered with, or None when it wrote the batch."""
    kind = reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])
    if kind == "ok":
        return None
    index = int(reply[1]) - 1
    approvals = list(batch.approvals)
    if kind == "again":
        vote = approvals[index]
        return BatchRefusal(run_id=vote.run_id, key=vote.key, approver=vote.approver)
    refused = (
        approvals[index] if index < len(approvals) else list(batch.claims)[index - len(approvals)]
    )
    held = codec.loads(ClaimRecord, reply[2])
    return BatchRefusal(run_id=refused.run_id, key=refused.key, claim=held)


def _fence(done: Completion) -> dict[str, Any]:
    """The owner and epoch a fenced completion is checked against (nothing when unfenced)."""
    return {} if done.owner is None else {"owner": done.owner, "epoch": done.epoch}


def refusal(change: StateChange, kind: str, reply: list[Any]) -> Exception:
    """The error for ``COMMIT``'s answer ``kind`` (``conflict``, ``missing`` or ``fenced``)."""
    if kind == "grant":
        return GrantUnavailable(change.grant_uses[int(reply[2]) - 1].grant_id, _text(reply[1]))
    if kind == "conflict":
        assert change.snapshot is not None
        return SnapshotVersionConflict(change.snapshot.run_id, change.snapshot.version - 1)
    done = change.completions[int(reply[1]) - 1]
    if kind == "fenced":
        held = codec.loads(ClaimRecord, reply[2])
        return fenced(done, held)
    return KeyError(
        f"no claim {done.key!r} on run {done.run_id!r} to complete: claim() it before completing it"
    )


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
