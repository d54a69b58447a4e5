"""The batch card (SPEC 12): several gated calls of one model step on one message.

Readable with ten calls: the header, one context line with what the calls share (who asked,
who may approve, when they expire, why they wait), then "Approve all N" / "Decline all N"
right under it (deciding the calls still pending with ``decide_many``), then one section per
call: its number, title and arguments on one line (what differs from the shared line under it,
such as why this call waits when the calls wait for different reasons), and an overflow
menu (⋯) to approve, edit, decline, show in full or withdraw that call alone. Withdraw is a
menu item, not a button on every row: only the requester may use it (anyone else is told so).
A decided call shows its outcome in its row, without menu; once every call is decided no button
is left.

A row's menu option carries the call (run, call id, the start of the shown fingerprint) within
Slack's 150 characters of an option value; a row whose ids are too long for that has no menu and
is decided with the card's buttons or from the Home tab. Fits Slack's limits with
``MAX_BATCH_CALLS`` calls: one block per call plus four (50 at most), and the arguments of all
rows together within ``TEXT_BUDGET`` characters (Slack refuses messages of about 13k characters
of blocks, whatever each block's own limit): values cut to fit are marked and "Show all" opens
every argument of that call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, get_args

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    Option,
    OverflowMenuElement,
    PlainTextObject,
    SectionBlock,
)

import bot.slack._messages as msg
from bot.slack._ids import (
    APPROVAL_BLOCK,
    APPROVE_ALL_ACTION,
    BATCH_BLOCK,
    DECLINE_ALL_ACTION,
    ROW_ACTION,
)
from bot.slack.blocks._args import as_json, field_key, field_value
from bot.slack.blocks._card import (
    FALLBACK_LIMIT,
    CardView,
    Decided,
    card_title,
    quorum_progress,
    requested,
    slack_date,
    tool_label,
    who_may_approve,
    why_of,
)
from bot.slack.blocks._decided_card import outcome_line
from bot.slack.blocks._mrkdwn import code_block, escape, escape_truncated
from bot.slack.blocks._refs import VALUE_LIMIT
from bot.slack.blocks._why import ROW_WHY_LIMIT, why_line

MAX_BATCH_CALLS = 20
"""Most calls one batch card lists (a step with more gets several cards)."""
TEXT_BUDGET = 6000
"""Characters of arguments all rows of one card share."""
ROW_LIMIT = 2800
"""Most characters of one row's section (Slack allows 3000)."""
_MIN_ARGS = 160
"""Arguments shown per row however many rows share the budget."""
WHY_BUDGET = 2400
"""Characters of "why it waits" all rows of one card share (when the calls wait for different
reasons; said once on the shared line when they wait for the same)."""
_MIN_WHY = 100


@dataclass(frozen=True, kw_only=True)
class BatchRow:
    """One call of a batch card: what it shows, and its outcome once decided."""

    view: CardView
    """The call as its card record says (with who has approved it so far)."""
    decided: Decided | None = None
    """Its outcome; None while it is pending."""
    replaced: bool = False
    """The call was presented again on a new card (an edit that needs more, a changed tool):
    this row keeps what it showed, without buttons."""

    @property
    def live(self) -> bool:
        """Whether the row still decides its call (it has buttons)."""
        return self.decided is None and not self.replaced


def batch_value(run_id: str, tool_call_id: str) -> str:
    """What "Approve all" / "Decline all" carry: the run and one call of the card (the card
    record of that call names the others)."""
    value = json.dumps({"r": run_id, "c": tool_call_id}, separators=(",", ":"))
    if len(value) > VALUE_LIMIT:
        raise ValueError(f"batch reference is {len(value)} chars, over {VALUE_LIMIT}")
    return value


def decode_batch_value(value: str | None) -> tuple[str, str] | None:
    """``(run_id, tool_call_id)`` of an "Approve all" / "Decline all" value; None when it is
    not one of ours."""
    try:
        found = json.loads(value or "")
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    run_id, call = found.get("r"), found.get("c")
    if not isinstance(run_id, str) or not isinstance(call, str) or not run_id or not call:
        return None
    return run_id, call


RowKind = Literal["approve", "grant", "edit", "decline", "show-all", "withdraw"]
"""What a row's menu does with its call."""
ROW_VALUE_LIMIT = 150
"""Slack's limit on an overflow option's ``value``."""
_FINGERPRINT_SHOWN = 16
"""Hex digits of the shown fingerprint a row's option carries (a stale menu is refused)."""
_ROW_KINDS: dict[str, RowKind] = {k: k for k in get_args(RowKind)}
_MENU_OPTIONS = 5
"""Slack shows at most five options in an overflow menu."""


@dataclass(frozen=True, kw_only=True)
class RowChoice:
    """An option of a row's menu: what to do with which call."""

    kind: RowKind
    """Approve, approve with a grant, edit, decline, show every argument, withdraw."""
    run_id: str
    """The run of the call."""
    tool_call_id: str
    """The call."""
    fingerprint: str
    """The start of ``agents.fingerprint`` of the arguments the row showed."""

    def encode(self) -> str:
        """The option value (compact JSON); ``ValueError`` past Slack's 150 characters."""
        value = json.dumps(
            {"k": self.kind, "r": self.run_id, "c": self.tool_call_id, "f": self.fingerprint},
            separators=(",", ":"),
        )
        if len(value) > ROW_VALUE_LIMIT:
            raise ValueError(f"row option is {len(value)} chars, over {ROW_VALUE_LIMIT}")
        return value

    @classmethod
    def decode(cls, value: str | None) -> RowChoice | None:
        """Parse an option value; None when it is not one of ours."""
        try:
            found = json.loads(value or "")
        except ValueError:
            return None
        if not isinstance(found, dict):
            return None
        kind, run_id, call, shown = (found.get(k) for k in ("k", "r", "c", "f"))
        if not isinstance(kind, str) or kind not in _ROW_KINDS:
            return None
        if not (isinstance(run_id, str) and isinstance(call, str) and isinstance(shown, str)):
            return None
        if not (run_id and call and shown):
            return None
        return cls(kind=_ROW_KINDS[kind], run_id=run_id, tool_call_id=call, fingerprint=shown)


def batch_card(rows: list[BatchRow]) -> list[Block]:
    """The whole batch card, pending rows with their menus, decided rows with outcomes."""
    if not rows or len(rows) > MAX_BATCH_CALLS:
        raise ValueError(f"a batch card lists 1 to {MAX_BATCH_CALLS} calls, not {len(rows)}")
    pending = [r for r in rows if r.live]
    budget = max(_MIN_ARGS, TEXT_BUDGET // len(rows))
    why_room = _why_room(len(rows))
    shared = _shared(pending, why_room)
    if pending:
        header = msg.BATCH_HEADER.format(count=len(rows))
    else:
        header = msg.BATCH_HEADER_DONE.format(count=len(rows))
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=header)),
        ContextBlock(
            elements=[MarkdownTextObject(text=p[:3000]) for p in _context(rows[0].view, shared)]
        ),
    ]
    if pending:
        blocks.append(_all_buttons(pending))
    for number, row in enumerate(rows, start=1):
        text, cut = _row_text(number, row, budget, shared, why_room)
        menu = _menu(number, row, cut) if row.live else None
        blocks.append(
            SectionBlock(
                block_id=f"{APPROVAL_BLOCK}:{number}",
                text=MarkdownTextObject(text=text),
                accessory=menu,
            )
        )
    if pending:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=msg.BATCH_HINT)]))
    return blocks


def batch_fallback(rows: list[BatchRow]) -> str:
    """The notification text of a batch card."""
    tools = ", ".join(dict.fromkeys(tool_label(r.view) for r in rows))
    return escape_truncated(msg.BATCH_FALLBACK.format(count=len(rows), tools=tools), FALLBACK_LIMIT)


def _facts(view: CardView, why_room: int = ROW_WHY_LIMIT) -> list[str]:
    """Who may approve, quorum progress, expiry, why it waits (short): what a pending row's
    call needs."""
    facts = [who_may_approve(view)]
    progress = quorum_progress(view)
    if progress:
        facts.append(progress)
    if view.expires_at is not None:  # to the minute, as Slack shows it: one step's calls
        minute = view.expires_at.replace(second=0, microsecond=0)  # expire alike
        facts.append(msg.EXPIRES.format(when=slack_date(minute)))
    why = why_line(why_of(view), pending=True, limit=why_room)
    if why is not None:
        facts.append(why)
    return facts


def _why_room(rows: int) -> int:
    """Characters of each row's "why" (the rows share ``WHY_BUDGET``)."""
    return max(_MIN_WHY, min(ROW_WHY_LIMIT, WHY_BUDGET // max(rows, 1)))


def _shared(pending: list[BatchRow], why_room: int) -> list[str]:
    """The facts every pending call shares: said once, in the card's context line."""
    if not pending:
        return []
    first = _facts(pending[0].view, why_room)
    return [f for f in first if all(f in _facts(r.view, why_room) for r in pending[1:])]


def _context(first: CardView, shared: list[str]) -> list[str]:
    return [requested(first), *shared]


def _row_text(
    number: int, row: BatchRow, budget: int, shared: list[str], why_room: int
) -> tuple[str, bool]:
    """The row's mrkdwn (number, title, tool, arguments; what it needs that the other calls do
    not, or its outcome) and whether its arguments were cut."""
    view = row.view
    title = escape_truncated(card_title(view), 150)
    tool = escape_truncated(tool_label(view), 80).replace("`", "'")
    head = msg.BATCH_ROW.format(number=number, title=title)
    if tool != title:
        head += " · " + msg.BATCH_ROW_TOOL.format(tool=tool)
    if view.destructive:
        head += " · " + msg.DESTRUCTIVE
    if row.replaced:
        foot = msg.BATCH_ROW_REPLACED
    elif row.decided is None:
        foot = " · ".join(f for f in _facts(view, why_room) if f not in shared)
    else:  # decided
        foot = outcome_line(view, row.decided)
    room = min(budget, ROW_LIMIT - len(head) - len(foot) - 4)
    args, cut = _args_text(view, max(room, 40))
    joiner = "\n" if args.startswith("```") else " · "
    text = head + joiner + args
    return (text + ("\n" + foot if foot else ""))[:3000], cut


def _menu(number: int, row: BatchRow, cut: bool) -> OverflowMenuElement | None:
    """The row's ⋯ menu: approve (and allow), edit, decline, withdraw, show all; at most five
    options, so "Approve and allow…" gives way to "Show all" on a cut row (the Home tab and the
    call's own card offer it). None when the call's ids do not fit an option's value."""
    view = row.view
    kinds: list[tuple[RowKind, str]] = [("approve", msg.APPROVE_BUTTON)]
    if view.grantable and not cut:
        kinds.append(("grant", msg.GRANT_BUTTON))
    kinds += [
        ("edit", msg.ROW_EDIT),
        ("decline", msg.ROW_DECLINE),
        ("withdraw", msg.ROW_WITHDRAW),
    ]
    if cut:
        kinds.append(("show-all", msg.SHOW_ALL_BUTTON))
    ref = view.ref
    try:
        options = [
            Option(
                value=RowChoice(
                    kind=kind,
                    run_id=ref.run_id,
                    tool_call_id=ref.tool_call_id,
                    fingerprint=ref.fingerprint[:_FINGERPRINT_SHOWN],
                ).encode(),
                text=PlainTextObject(text=label),
            )
            for kind, label in kinds[:_MENU_OPTIONS]
        ]
    except ValueError:
        return None
    return OverflowMenuElement(
        action_id=ROW_ACTION,
        options=options,
        confirm=_confirm_row(view) if view.rules.confirm else None,
    )


def _confirm_row(view: CardView) -> ConfirmObject:
    """The rule asks "are you sure?" before an approval: the menu asks before any choice."""
    tool = escape_truncated(card_title(view), 150)
    return ConfirmObject(
        title=PlainTextObject(text=msg.CONFIRM_TITLE),
        text=MarkdownTextObject(text=escape_truncated(msg.CONFIRM_ROW.format(tool=tool), 300)),
        confirm=PlainTextObject(text=msg.CONFIRM_ROW_YES),
        deny=PlainTextObject(text=msg.CANCEL),
        style="danger" if view.destructive else "primary",
    )


def _args_text(view: CardView, room: int) -> tuple[str, bool]:
    """``key: `value` `` pairs when flat and short enough, else JSON in a code block; cut to
    ``room`` characters (and marked) when longer."""
    pairs = []
    for key, value in view.args.items():
        name, shown = field_key(key), field_value(value)
        if name is None or shown is None:
            break
        pairs.append(f"{name} {shown}")
    else:
        inline = " · ".join(pairs) if pairs else msg.BATCH_NO_ARGS
        if len(inline) <= room:
            return inline, False
    text = as_json(view.args)
    block = code_block(text, room)
    cut = len(escape(text.replace("```", "`\u200b``"))) > room - 6
    if cut:
        block += "\n" + msg.BATCH_ARGS_CUT
    return block, cut


def _all_buttons(pending: list[BatchRow]) -> ActionsBlock:
    """ "Approve all N" (with a confirm dialog naming N) and "Decline all N"."""
    count = len(pending)
    first = pending[0].view.ref
    value = batch_value(first.run_id, first.tool_call_id)
    return ActionsBlock(
        block_id=f"{BATCH_BLOCK}:all",
        elements=[
            ButtonElement(
                text=PlainTextObject(text=msg.APPROVE_ALL_BUTTON.format(count=count)),
                action_id=APPROVE_ALL_ACTION,
                value=value,
                style="primary",
                confirm=_confirm_all(count, approve=True),
            ),
            ButtonElement(
                text=PlainTextObject(text=msg.DECLINE_ALL_BUTTON.format(count=count)),
                action_id=DECLINE_ALL_ACTION,
                value=value,
                style="danger",
                confirm=_confirm_all(count, approve=False),
            ),
        ],
    )


def _confirm_all(count: int, *, approve: bool) -> ConfirmObject:
    text = msg.CONFIRM_APPROVE_ALL if approve else msg.CONFIRM_DECLINE_ALL
    return ConfirmObject(
        title=PlainTextObject(text=msg.CONFIRM_TITLE),
        text=MarkdownTextObject(text=text.format(count=count)),
        confirm=PlainTextObject(
            text=(msg.APPROVE_ALL_BUTTON if approve else msg.DECLINE_ALL_BUTTON).format(count=count)
        ),
        deny=PlainTextObject(text=msg.CANCEL),
        style="primary" if approve else "danger",
    )
