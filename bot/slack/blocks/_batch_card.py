"""The batch card (SPEC 12): several gated calls of one model step on one message.

Every call is listed in full (its tool, its arguments, who may approve it, its quorum and
expiry), each with its own Approve / Edit / Decline / Withdraw buttons, then "Approve all N"
and "Decline all N" deciding the calls still pending with ``decide_many``. A decided call shows
its outcome in its row, without buttons; once every call is decided no button is left.

Fits Slack's limits with ``MAX_BATCH_CALLS`` calls: two blocks per call plus three (50 at
most), and the arguments of all rows together within ``TEXT_BUDGET`` characters (Slack refuses
messages of about 13k characters of blocks, whatever each block's own limit): values cut to fit
are marked and "Show all" opens every argument of that call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

import bot.slack._messages as msg
from bot.slack._ids import APPROVAL_BLOCK, APPROVE_ALL_ACTION, BATCH_BLOCK, DECLINE_ALL_ACTION
from bot.slack.blocks._args import as_json, field_key, field_value
from bot.slack.blocks._card import (
    FALLBACK_LIMIT,
    CardView,
    Decided,
    card_title,
    decision_buttons,
    quorum_progress,
    requested,
    show_all_button,
    slack_date,
    tool_label,
    who_may_approve,
)
from bot.slack.blocks._decided_card import outcome_line
from bot.slack.blocks._mrkdwn import code_block, escape, escape_truncated
from bot.slack.blocks._refs import VALUE_LIMIT

MAX_BATCH_CALLS = 20
"""Most calls one batch card lists (a step with more gets several cards)."""
TEXT_BUDGET = 6000
"""Characters of arguments all rows of one card share."""
ROW_LIMIT = 2800
"""Most characters of one row's section (Slack allows 3000)."""
_MIN_ARGS = 160
"""Arguments shown per row however many rows share the budget."""


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


def batch_card(rows: list[BatchRow]) -> list[Block]:
    """The whole batch card, pending rows with their buttons, decided rows with outcomes."""
    if not rows or len(rows) > MAX_BATCH_CALLS:
        raise ValueError(f"a batch card lists 1 to {MAX_BATCH_CALLS} calls, not {len(rows)}")
    pending = [r for r in rows if r.live]
    budget = max(_MIN_ARGS, TEXT_BUDGET // len(rows))
    if pending:
        header = msg.BATCH_HEADER.format(count=len(rows))
    else:
        header = msg.BATCH_HEADER_DONE.format(count=len(rows))
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=header)),
        ContextBlock(elements=[MarkdownTextObject(text=_context(rows))]),
    ]
    for number, row in enumerate(rows, start=1):
        text, cut = _row_text(number, row, budget)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=text)))
        if row.live:
            buttons = decision_buttons(row.view, block_id=f"{APPROVAL_BLOCK}:{number}")
            if cut:
                buttons = decision_buttons(
                    row.view, block_id=f"{APPROVAL_BLOCK}:{number}", extra=show_all_button(row.view)
                )
            blocks.append(buttons)
        elif cut:
            blocks.append(
                ActionsBlock(
                    block_id=f"{BATCH_BLOCK}-show-{number}", elements=[show_all_button(row.view)]
                )
            )
    if pending:
        blocks.append(_all_buttons(pending))
    return blocks


def batch_fallback(rows: list[BatchRow]) -> str:
    """The notification text of a batch card."""
    tools = ", ".join(dict.fromkeys(tool_label(r.view) for r in rows))
    return escape_truncated(msg.BATCH_FALLBACK.format(count=len(rows), tools=tools), FALLBACK_LIMIT)


def _context(rows: list[BatchRow]) -> str:
    first = rows[0].view
    return requested(first) + " · " + msg.BATCH_HINT


def _row_text(number: int, row: BatchRow, budget: int) -> tuple[str, bool]:
    """The row's mrkdwn (title, tool, arguments, who may approve or the outcome) and whether
    its arguments were cut."""
    view = row.view
    title = escape_truncated(card_title(view), 150)
    tool = escape_truncated(tool_label(view), 80).replace("`", "'")
    head = msg.BATCH_ROW.format(number=number, title=title, tool=tool)
    if view.destructive:
        head += " · " + msg.DESTRUCTIVE
    if row.replaced:
        foot = msg.BATCH_ROW_REPLACED
    elif row.decided is None:
        tail = [who_may_approve(view)]
        progress = quorum_progress(view)
        if progress:
            tail.append(progress)
        if view.expires_at is not None:
            tail.append(msg.EXPIRES.format(when=slack_date(view.expires_at)))
        foot = " · ".join(tail)
    else:  # decided
        foot = outcome_line(view, row.decided)
    room = min(budget, ROW_LIMIT - len(head) - len(foot) - 4)
    args, cut = _args_text(view, max(room, 40))
    return f"{head}\n{args}\n{foot}"[:3000], cut


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
