"""Why a call waits, in words a card shows (SPEC 12 round 4), and what an edit changed.

The gate already decided and stored why (``PendingToolCall.requirement``: its reasons, the
policy rule it falls under, who may approve, the quorum); ``Why`` is that answer in the card's
terms, kept with the card record so a decided card still says it. ``why_line`` puts it in one
sentence: "Why it waits: delete-record always needs approval · Refunds over 1,000 (rule 2 of
countersign.toml): 2 approvals from @finance". ``edit_line`` says who changed what on an edited
proposal: "@sam changed amount `300` → `1150`; rule 2 of countersign.toml now applies".

Example:
    >>> why = Why(reasons=("delete-record always needs approval",))
    >>> why_text(why, approvers=(), approvals=1)
    'delete-record always needs approval'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import bot.slack._messages as msg
from bot.slack.blocks._args import changed_keys, revealed
from bot.slack.blocks._mrkdwn import escape, escape_truncated, mention, truncate_escaped

WHY_LIMIT = 1500
"""Most characters of a card's "why" line (a context element holds 3000)."""
ROW_WHY_LIMIT = 240
"""Most characters of it on a batch card's row or shared line (ten rows share 13k)."""
_REASON_LIMIT = 300
_VALUE_LIMIT = 60
_CHANGES_SHOWN = 5


@dataclass(frozen=True, kw_only=True)
class Why:
    """Why a call waits and under which rule, as the gate stored it with the call."""

    reasons: tuple[str, ...] = ()
    """One sentence per gate that held the call ("delete-record always needs approval";
    "Destructive MCP tool (no readOnlyHint)"; a policy rule's words and place)."""
    rule_number: int | None = None
    """The policy rule it falls under (1-based, as in its file); None: no rule matched."""
    rule_source: str | None = None
    """The file that rule is in (``countersign.toml``)."""
    rule_text: str | None = None
    """What the rule says: its description, else its tools and conditions."""

    def to_json(self) -> dict[str, Any]:
        """As a card record keeps it."""
        return {
            "reasons": list(self.reasons),
            "rule_number": self.rule_number,
            "rule_source": self.rule_source,
            "rule_text": self.rule_text,
        }

    @classmethod
    def from_json(cls, data: Any) -> Why:
        """From a card record (a record made before cards said why: nothing)."""
        if not isinstance(data, dict):
            return cls()
        number = data.get("rule_number")
        return cls(
            reasons=tuple(str(r) for r in data.get("reasons") or ()),
            rule_number=number if isinstance(number, int) else None,
            rule_source=data.get("rule_source") or None,
            rule_text=data.get("rule_text") or None,
        )


def rule_place(why: Why) -> str | None:
    """``rule 2 of countersign.toml`` (``rule 2`` without a file); None: no rule."""
    if why.rule_number is None:
        return None
    if why.rule_source:
        return msg.RULE_OF_FILE.format(number=why.rule_number, file=why.rule_source)
    return msg.RULE_NUMBER.format(number=why.rule_number)


def why_text(
    why: Why,
    *,
    approvers: Sequence[str],
    approvals: int,
    named: Callable[[str], str] = mention,
) -> str:
    """Why the call waits, escaped mrkdwn: the reasons of the gates that held it, then the rule
    it falls under with what that rule asks (the quorum, who may approve); "" when the call
    has no recorded reason (a call stored before reasons were)."""
    place = rule_place(why)
    parts = [
        escape_truncated(reason, _REASON_LIMIT)
        for reason in why.reasons
        if place is None or not reason.endswith(place)  # the rule's own words come below
    ]
    if place is not None:
        rule = escape(place)
        if why.rule_text:
            rule = f"{escape_truncated(why.rule_text, _REASON_LIMIT)} ({rule})"
        asks = _asks(approvers, approvals, named)
        parts.append(f"{rule}: {asks}" if asks else rule)
    return " · ".join(parts)


def _asks(approvers: Sequence[str], approvals: int, named: Callable[[str], str]) -> str:
    who = ", ".join(named(a) for a in approvers[:10])
    if approvals > 1:
        template = msg.RULE_ASKS_QUORUM_FROM if who else msg.RULE_ASKS_QUORUM
        return template.format(count=approvals, who=who)
    return msg.RULE_ASKS_FROM.format(who=who) if who else ""


def why_line(text: str, *, pending: bool, limit: int = WHY_LIMIT) -> str | None:
    """``text`` under its label ("Why it waits:" / "Why it waited:"), cut to ``limit``."""
    if not text:
        return None
    template = msg.WHY_PENDING if pending else msg.WHY_DECIDED
    line = template.format(why=text)
    if len(line) <= limit:
        return line
    cut = truncate_escaped(line, limit)[:-1]
    opened = cut.rfind("<")
    if opened > cut.rfind(">"):  # never half a mention
        cut = cut[:opened]
    return cut + "…"


def edit_line(
    edited_from: dict[str, Any], args: dict[str, Any], editor: str | None, why: Why
) -> str:
    """Who changed which argument from what to what, and the rule that now applies:
    "<@U2> changed amount `300` → `1150`; rule 2 of countersign.toml now applies". An edited
    proposal exists only because the edit needs more than the call shown before (SPEC 3.3),
    so the line always says so."""
    keys = changed_keys(edited_from, args)
    changes = [
        msg.CHANGED_FROM_TO.format(
            key=escape_truncated(str(key), _VALUE_LIMIT),
            was=_value(edited_from, key),
            now=_value(args, key),
        )
        for key in keys[:_CHANGES_SHOWN]
    ]
    if len(keys) > _CHANGES_SHOWN:
        changes.append(msg.CHANGED_MORE.format(count=len(keys) - _CHANGES_SHOWN))
    who = mention(editor) if editor else msg.EDITED_BY_SOMEONE
    line = msg.EDITED_CHANGED.format(who=who, changes=", ".join(changes) or msg.CHANGED_NOTHING)
    place = rule_place(why)
    tail = msg.EDIT_RULE_APPLIES.format(rule=escape(place)) if place else msg.EDIT_NEEDS_MORE_NOW
    return f"{line}; {tail}"


def _value(args: dict[str, Any], key: str) -> str:
    """One argument's value as inline code, cut short (``(none)`` when absent)."""
    if key not in args:
        return msg.NO_VALUE
    text = json.dumps(revealed(args[key]), ensure_ascii=False, default=str)
    if isinstance(args[key], str):
        text = text[1:-1]  # "prod" reads as prod
    return "`" + escape_truncated(text.replace("`", "'").replace("\n", " "), _VALUE_LIMIT) + "`"
