"""What a person is told in Slack when the gate refused their decision: one sentence per kind
of refusal (``bot.policy.answer_of``, the mapping the HTTP API answers with too), for a card's
button, a modal, the Home tab and "Approve all" alike."""

from __future__ import annotations

import bot.slack._messages as msg
from agents.errors import (
    NOT_REQUESTER_RULE,
    AgentError,
    AlreadyDecided,
    GrantNotAllowed,
    NotAllowedToDecide,
)
from bot._errors import AnswerKind, answer_of
from bot.policy import Refusal
from bot.slack.blocks._blocks import already_decided_text

_WORDS: dict[AnswerKind, str] = {
    "expired": msg.EXPIRED,
    "cannot-extend": msg.CANNOT_EXTEND.format(why="its rule allows no more time"),
    "changed-args": msg.FINGERPRINT_CHANGED,
    "duplicate": msg.DUPLICATE_APPROVAL,
    "tool-changed": msg.TOOL_CHANGED,
    "invalid-data": msg.INVALID_DATA,
}


def told(error: AgentError) -> str:
    """The ephemeral for the gate's refusal ``error``."""
    if isinstance(error, NotAllowedToDecide):
        if error.rule == NOT_REQUESTER_RULE:
            return msg.REFUSED_NOT_REQUESTER
        return refusal_text(Refusal.of(error))
    if isinstance(error, GrantNotAllowed):  # nothing recorded: the call is still pending
        return msg.GRANT_REFUSED.format(why=error.reason)
    kind = answer_of(error).kind
    if kind == "already-decided" and isinstance(error, AlreadyDecided):
        return already_decided_text(error.decision, error.decided_by, error.decided_at)
    return _WORDS.get(kind, msg.NO_LONGER_PENDING)


def refusal_text(refusal: Refusal) -> str:
    """The ephemeral for a decision policy's refusal, chosen by its rule."""
    if refusal.rule == "self-approval":
        return msg.REFUSED_SELF_APPROVAL
    if refusal.rule == "not-approver":
        return msg.REFUSED_NOT_APPROVER
    if refusal.rule == "other-workspace":
        return msg.REFUSED_OTHER_WORKSPACE
    return msg.REFUSED_BY_POLICY.format(why=refusal.text)
