"""The modals: decline with an optional reason, edit-then-approve, provide details.

Pure functions returning ``slack_sdk.models.views.View`` dicts; only opaque ids travel in
``private_metadata`` (``ModalRef``), everything else stays server-side.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

import bot.slack._messages as msg
from bot.policy import ArgsThreshold
from bot.slack._ids import DECLINE_VIEW, EDIT_VIEW, PROVIDE_VIEW, REASON_BLOCK
from bot.slack.blocks._args import all_arguments_blocks
from bot.slack.blocks._forms import VALUE_ACTION, FormField, form_blocks
from bot.slack.blocks._mrkdwn import escape_truncated
from bot.slack.blocks._refs import ModalRef

REASON_LIMIT = 2000
"""Longest decline reason accepted."""


def _intro(template: str, tool: str) -> SectionBlock:
    name = escape_truncated(tool, 80).replace("`", "'")
    return SectionBlock(text=MarkdownTextObject(text=template.format(tool=name)))


def _modal(callback_id: str, title: str, submit: str, meta: ModalRef, blocks: list[Block]) -> Any:
    view = View(
        type="modal",
        callback_id=callback_id,
        title=PlainTextObject(text=title),
        submit=PlainTextObject(text=submit),
        close=PlainTextObject(text=msg.CANCEL),
        private_metadata=meta.encode(),
        blocks=blocks,
    )
    return view.to_dict()


def decline_modal(meta: ModalRef, tool: str) -> dict[str, Any]:
    """Decline, with an optional multiline reason."""
    reason = InputBlock(
        block_id=REASON_BLOCK,
        label=PlainTextObject(text=msg.DECLINE_REASON_LABEL),
        hint=PlainTextObject(text=msg.DECLINE_REASON_HINT),
        optional=True,
        element=PlainTextInputElement(
            action_id=VALUE_ACTION, multiline=True, max_length=REASON_LIMIT
        ),
    )
    blocks: list[Block] = [_intro(msg.DECLINE_INTRO, tool), reason]
    return dict(_modal(DECLINE_VIEW, msg.DECLINE_TITLE, msg.DECLINE_SUBMIT, meta, blocks))


def edit_modal(
    meta: ModalRef,
    tool: str,
    fields: list[FormField],
    args: dict[str, Any],
    warnings: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The tool's input form prefilled with the pending arguments; Submit approves.
    ``warnings``: what some edits would need beyond the call's rule (said beforehand)."""
    blocks: list[Block] = [_intro(msg.EDIT_INTRO, tool)]
    if warnings:
        blocks.append(
            ContextBlock(elements=[MarkdownTextObject(text=w[:3000]) for w in warnings[:10]])
        )
    blocks.extend(form_blocks(fields, args))
    return dict(_modal(EDIT_VIEW, msg.EDIT_TITLE, msg.EDIT_SUBMIT, meta, blocks))


def edit_warning(threshold: ArgsThreshold) -> str:
    """ "Arguments with amount above 1,000 need 2 different approvers and a confirmation …"."""
    what = " and ".join(
        msg.ARG_ABOVE.format(name=escape_truncated(name, 60).replace("`", "'"), limit=f"{limit:,}")
        for name, limit in threshold.args_above.items()
    )
    needs = []
    if threshold.approvals > 1:
        needs.append(msg.NEEDS_APPROVERS.format(count=threshold.approvals))
    if threshold.confirm:
        needs.append(msg.NEEDS_CONFIRM)
    return msg.EDIT_NEEDS_MORE.format(what=what, needs=" and ".join(needs), rule=threshold.rule)


def provide_modal(meta: ModalRef, tool: str, fields: list[FormField]) -> dict[str, Any]:
    """The tool's resume form; Submit resumes the call."""
    blocks: list[Block] = [_intro(msg.PROVIDE_INTRO, tool), *form_blocks(fields, {})]
    return dict(_modal(PROVIDE_VIEW, msg.PROVIDE_TITLE, msg.PROVIDE_SUBMIT, meta, blocks))


def arguments_modal(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Every argument in full ("Show all" under a card whose arguments were cut); no Submit."""
    blocks: list[Block] = [_intro(msg.ARGS_MODAL_INTRO, tool), *all_arguments_blocks(args)]
    view = View(
        type="modal",
        title=PlainTextObject(text=msg.ARGS_MODAL_TITLE),
        close=PlainTextObject(text=msg.CLOSE),
        blocks=blocks,
    )
    return dict(view.to_dict())
