"""The "Approve and allow…" modal (SPEC 15): how long, how many uses (both bounded by the
call's rule), where (this thread or this channel), and which arguments may vary (the rule's
``grants.free_args`` come ticked; none ticked: all pinned). ``grant_modal`` builds it;
``read_grant`` turns a Submit into a ``GrantRequest``.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextObject,
    RadioButtonsElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

import bot.slack._messages as msg
from agents import GrantRequest, GrantScope, PendingToolCall
from bot.slack._ids import GRANT_VIEW
from bot.slack.blocks._mrkdwn import escape_truncated
from bot.slack.blocks._refs import ModalRef

DURATION_BLOCK = "grant-duration"
USES_BLOCK = "grant-uses"
SCOPE_BLOCK = "grant-scope"
FREE_BLOCK = "grant-free"
CHOICE_ACTION = "value"
"""``action_id`` of each input's element."""
_DURATIONS = (
    (15 * 60, "15 minutes"),
    (3600, "1 hour"),
    (4 * 3600, "4 hours"),
    (8 * 3600, "8 hours"),
    (86400, "1 day"),
    (7 * 86400, "7 days"),
)
_USES = (1, 3, 5, 10, 20, 50, 100)
_DEFAULT_SECONDS = 3600
_DEFAULT_USES = 10
_MAX_FREE = 10
"""Slack's limit on checkbox options."""


def durations(max_seconds: float | None) -> list[tuple[int, str]]:
    """The durations offered: those within the rule's bound (the bound itself when none is)."""
    offered = [(s, label) for s, label in _DURATIONS if max_seconds is None or s <= max_seconds]
    if not offered and max_seconds is not None:
        offered = [(int(max_seconds), f"{int(max_seconds)} seconds")]
    return offered


def uses(max_uses: int | None) -> list[int]:
    """The numbers of uses offered: those within the rule's bound (and the bound itself)."""
    offered = [n for n in _USES if max_uses is None or n <= max_uses]
    if max_uses is not None and max_uses not in offered:
        offered.append(max_uses)
    return offered


def _select(options: list[tuple[str, str]], initial: str) -> StaticSelectElement:
    made = [Option(value=value, text=label) for value, label in options]
    chosen = next((o for o in made if o.value == initial), made[-1])
    return StaticSelectElement(action_id=CHOICE_ACTION, options=made, initial_option=chosen)


def grant_modal(meta: ModalRef, pending: PendingToolCall) -> dict[str, Any]:
    """The modal for approving ``pending`` with a standing grant."""
    offered = durations(pending.grant_max_seconds)
    initial_seconds = max((s for s, _ in offered if s <= _DEFAULT_SECONDS), default=offered[0][0])
    counts = uses(pending.grant_max_uses)
    initial_uses = max((n for n in counts if n <= _DEFAULT_USES), default=counts[0])
    scopes = [
        Option(value="thread", text=msg.GRANT_SCOPE_THREAD),
        Option(value="resource", text=msg.GRANT_SCOPE_RESOURCE),
    ]
    tool = escape_truncated(pending.tool_name, 80).replace("`", "'")
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=msg.GRANT_MODAL_INTRO.format(tool=tool))),
        InputBlock(
            block_id=DURATION_BLOCK,
            label=PlainTextObject(text=msg.GRANT_DURATION_LABEL),
            element=_select([(str(s), label) for s, label in offered], str(initial_seconds)),
        ),
        InputBlock(
            block_id=USES_BLOCK,
            label=PlainTextObject(text=msg.GRANT_USES_LABEL),
            element=_select([(str(n), str(n)) for n in counts], str(initial_uses)),
        ),
        InputBlock(
            block_id=SCOPE_BLOCK,
            label=PlainTextObject(text=msg.GRANT_SCOPE_LABEL),
            element=RadioButtonsElement(
                action_id=CHOICE_ACTION, options=scopes, initial_option=scopes[0]
            ),
        ),
    ]
    names = list(pending.args)[:_MAX_FREE]
    if names:
        options = [Option(value=name, text=escape_truncated(name, 70)) for name in names]
        free = set(pending.requirement.free_args)
        ticked = [o for o in options if o.value in free]
        blocks.append(
            InputBlock(
                block_id=FREE_BLOCK,
                label=PlainTextObject(text=msg.GRANT_FREE_LABEL),
                hint=PlainTextObject(text=msg.GRANT_FREE_HINT),
                optional=True,
                element=CheckboxesElement(
                    action_id=CHOICE_ACTION,
                    options=options,
                    # The rule's free_args come ticked: a useful grant by default.
                    initial_options=ticked or None,
                ),
            )
        )
    view = View(
        type="modal",
        callback_id=GRANT_VIEW,
        title=PlainTextObject(text=msg.GRANT_MODAL_TITLE),
        submit=PlainTextObject(text=msg.GRANT_MODAL_SUBMIT),
        close=PlainTextObject(text=msg.CANCEL),
        private_metadata=meta.encode(),
        blocks=blocks,
    )
    return view.to_dict()


def read_grant(values: dict[str, dict[str, Any]], pending: PendingToolCall) -> GrantRequest:
    """The grant a Submit asks for (the runtime checks it against the rule's bounds)."""

    def chosen(block: str) -> str | None:
        state = values.get(block, {}).get(CHOICE_ACTION, {})
        option = state.get("selected_option") or {}
        return option.get("value") if isinstance(option, dict) else None

    seconds = float(chosen(DURATION_BLOCK) or _DEFAULT_SECONDS)
    count = int(chosen(USES_BLOCK) or 1)
    within: GrantScope = "resource" if chosen(SCOPE_BLOCK) == "resource" else "thread"
    picked = values.get(FREE_BLOCK, {}).get(CHOICE_ACTION, {}).get("selected_options") or []
    free = tuple(
        str(o["value"]) for o in picked if isinstance(o, dict) and o.get("value") in pending.args
    )
    return GrantRequest(seconds=seconds, max_uses=count, within=within, free_args=free)
