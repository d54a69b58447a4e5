"""Where each approval card (or question) was posted: storage's card records.

A ``CardRecord`` is the durable mapping (run id + tool call id → team, channel, ts + what the
card showed), so the card can be updated after a restart, by the expiry job or by the HTTP API.
It is written with the ``presented`` audit event in one transaction (presentations are
audited), but only the record is read back: pruning audit never loses a card. An Extend rewrites
the record's expiry (``CardStore.extended``; the ``extended`` audit event says it moved).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final, Literal

from bot.policy._card_rules import CardRules
from bot.slack.blocks._card import CardView
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks._why import Why
from storage import AuditEvent, CardRecord, Storage, utcnow

PRESENTED: Final[Literal["presented"]] = "presented"
"""The audit kind of a card or question shown in Slack (an ``EdgeAuditKind``)."""


@dataclass(frozen=True, kw_only=True)
class PostedCard:
    """An approval card as posted in Slack."""

    view: CardView
    """What the card shows."""
    channel: str
    """Slack channel of the card."""
    ts: str
    """Slack ``ts`` of the card (the key for ``chat.update``)."""
    thread_ts: str
    """The Slack thread the card was posted in."""
    team: str
    """The Slack workspace of that thread (the ``<team>`` of its thread id)."""
    question: dict[str, Any] | None = None
    """For a tool's question (not an approval card): what it asked (its suspend payload)."""
    batch: tuple[str, ...] = ()
    """On a batch card: the tool call ids of every call on the same message, in order (this
    one included); empty for a card of its own."""


class CardStore:
    """Records and finds posted approval cards."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def record(
        self,
        card: PostedCard,
        *,
        thread_id: str,
        agent_id: str | None,
        question: dict[str, Any] | None = None,
    ) -> None:
        """Keep where a card just posted is, with its ``presented`` audit event (one write)."""
        view = card.view
        now = utcnow()
        shown = {
            "tool_name": view.tool_name,
            "args": view.args,
            "fingerprint": view.ref.fingerprint,
            "definition_digest": view.ref.definition_digest,
            "requester": view.requester,
            "agent_path": list(view.agent_path),
            **_shown(view),
            **({"question": question} if question is not None else {}),
            **({"batch": list(card.batch)} if card.batch else {}),
        }
        where = {"channel": card.channel, "ts": card.ts, "thread_ts": card.thread_ts}
        presented = AuditEvent(
            id=uuid.uuid4().hex,
            at=now,
            kind=PRESENTED,
            run_id=view.ref.run_id,
            tool_call_id=view.ref.tool_call_id,
            thread_id=thread_id,
            agent_id=agent_id,
            actor=view.requester,
            source="slack",
            data={**where, "team": card.team, **shown},
        )
        record = CardRecord(
            run_id=view.ref.run_id,
            tool_call_id=view.ref.tool_call_id,
            team=card.team,
            posted_at=now,
            shown=shown,
            **where,
        )
        await self._storage.put_card(record, audit=[presented])

    async def extended(self, card: PostedCard, expires_at: datetime | None) -> PostedCard:
        """``card`` now showing ``expires_at`` (its call was extended), its record too: whatever
        draws it from the record later (a restart, a reminder, a batch card's row) shows the
        new expiry. A record replaced meanwhile by a newer card of the call is left alone.
        Call it under the card's thread lock (cards are recorded under it)."""
        moved = replace(card, view=replace(card.view, expires_at=expires_at))
        ref = card.view.ref
        record = await self._storage.get_card(ref.run_id, ref.tool_call_id)
        if record is None or record.ts != card.ts:
            return moved
        when = expires_at.isoformat() if expires_at else None
        if record.shown.get("expires_at") != when:
            shown = {**record.shown, "expires_at": when}
            await self._storage.put_card(replace(record, shown=shown))
        return moved

    async def find(self, run_id: str, tool_call_id: str) -> PostedCard | None:
        """The most recent card posted for a call, or None."""
        record = await self._storage.get_card(run_id, tool_call_id)
        return None if record is None else _from_record(record)


def _from_record(record: CardRecord) -> PostedCard:
    data = record.shown
    view = CardView(
        ref=ApprovalRef(
            run_id=record.run_id,
            tool_call_id=record.tool_call_id,
            fingerprint=data["fingerprint"],
            definition_digest=data.get("definition_digest"),
        ),
        tool_name=str(data["tool_name"]),
        args=dict(data.get("args") or {}),
        requester=data.get("requester"),
        agent_path=tuple(data.get("agent_path") or ()),
        title=data.get("title"),
        server=data.get("server"),
        remote_name=data.get("remote_name"),
        destructive=bool(data.get("destructive")),
        rules=CardRules(
            approvers=tuple(data.get("approvers") or ()),
            allow_self_approval=bool(data.get("allow_self_approval", True)),
            approvals_required=int(data.get("approvals_required") or 1),
            confirm=bool(data.get("confirm")),
            escalated_approvers=tuple(data.get("escalated_approvers") or ()),
            escalation_step=int(data.get("escalation_step") or 0),
        ),
        approved_by=tuple(data.get("approved_by") or ()),
        expires_at=_when(data.get("expires_at")),
        grantable=bool(data.get("grantable")),
        origin=data.get("origin"),
        why=Why.from_json(data.get("why")),
        edited_from=data.get("edited_from"),
        edited_by=data.get("edited_by"),
    )
    return PostedCard(
        view=view,
        channel=record.channel,
        ts=record.ts,
        thread_ts=record.thread_ts,
        team=record.team,
        question=data.get("question"),
        batch=tuple(str(c) for c in data.get("batch") or ()),
    )


def _shown(view: CardView) -> dict[str, Any]:
    """What else the card showed (cards recorded before these fields read the defaults)."""
    return {
        "title": view.title,
        "server": view.server,
        "remote_name": view.remote_name,
        "destructive": view.destructive,
        "approvers": list(view.rules.approvers),
        "allow_self_approval": view.rules.allow_self_approval,
        "approvals_required": view.rules.approvals_required,
        "confirm": view.rules.confirm,
        "escalated_approvers": list(view.rules.escalated_approvers),
        "escalation_step": view.rules.escalation_step,
        "approved_by": list(view.approved_by),
        "expires_at": view.expires_at.isoformat() if view.expires_at else None,
        "grantable": view.grantable,
        **({"origin": view.origin} if view.origin else {}),
        "why": view.why.to_json(),
        **({"edited_from": view.edited_from} if view.edited_from is not None else {}),
        **({"edited_by": view.edited_by} if view.edited_by else {}),
    }


def _when(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None
