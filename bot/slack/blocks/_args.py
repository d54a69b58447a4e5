"""Tool arguments on a card: section ``fields`` when flat and short, a code block otherwise,
invisible characters shown visibly, and whatever is cut to fit Slack marked as cut.

``all_arguments_blocks`` is the "Show all" modal's content: every argument in full (split in
code blocks of at most 3000 characters).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import Block, MarkdownTextObject, SectionBlock

import bot.slack._messages as msg
from bot.slack.blocks._mrkdwn import code_block, escape, escape_truncated

SECTION_LIMIT = 3000
"""Slack's limit on a section's text."""
FIELDS_LIMIT = 10
"""Slack's limit on a section's fields."""
SHORT_VALUE = 200
"""Longest value (as JSON) shown as a field; longer arguments go in a code block."""
KEY_LIMIT = 60
"""Longest argument name shown as a field's label."""
CODE_LIMIT = 2900
"""The code block of a card's arguments (room left for its label)."""
MODAL_BLOCKS = 95
"""Code blocks of the "Show all" modal (a modal holds 100 blocks)."""

_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\U000e0000-\U000e007f]"
)


def reveal(text: str) -> str:
    """``text`` with invisible and control characters (zero-width space, bidi overrides …)
    written out as ``⟦U+200B⟧``, so ``prod\\u200bdb`` cannot pass for ``proddb``."""
    return _INVISIBLE.sub(lambda m: f"⟦U+{ord(m.group()):04X}⟧", text)


def revealed(value: Any) -> Any:
    """A JSON value with every string (keys too) passed through ``reveal``."""
    if isinstance(value, str):
        return reveal(value)
    if isinstance(value, dict):
        return {reveal(str(k)): revealed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [revealed(v) for v in value]
    return value


def as_json(args: Any) -> str:
    """Arguments as the card shows them: indented JSON, invisible characters revealed."""
    return json.dumps(revealed(args), indent=2, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True, kw_only=True)
class ArgsView:
    """One labelled set of arguments on a card."""

    blocks: list[Block]
    cut: bool
    """True when something was cut to fit ("Show all" shows it)."""


def field_value(value: Any) -> str | None:
    """The inline-code text of a flat short value, or None when it does not fit a field.

    A string is shown as it is (an empty or blank one as its JSON, ``""``, so it is seen)."""
    if isinstance(value, (dict, list)):
        return None
    if isinstance(value, str):
        text = reveal(value) if value.strip() else json.dumps(value)
    else:
        text = json.dumps(value, default=str)
    if len(text) > SHORT_VALUE or "`" in text or "\n" in text:
        return None
    return f"`{escape(text)}`"


def field_key(key: Any) -> str | None:
    """An argument's name as a field's label: bold, or inline code when it holds mrkdwn's
    formatting characters (``record_id`` stays ``record_id``); None when it cannot be a label."""
    name = reveal(str(key))
    if not name.strip() or len(name) > KEY_LIMIT or "`" in name or "\n" in name:
        return None
    if any(c in name for c in "*_~"):
        return f"`{escape(name)}`"
    return f"*{escape(name)}*"


def _fields(args: dict[str, Any]) -> list[MarkdownTextObject] | None:
    if not args or len(args) > FIELDS_LIMIT:
        return None
    fields = []
    for key, value in args.items():
        shown, name = field_value(value), field_key(key)
        if shown is None or name is None:
            return None
        fields.append(MarkdownTextObject(text=f"{name}\n{shown}"))
    return fields


def args_view(label: str, args: dict[str, Any]) -> ArgsView:
    """``args`` under ``label`` (mrkdwn): fields when flat and short, else a code block."""
    fields = _fields(args)
    if fields is not None:
        return ArgsView(
            blocks=[SectionBlock(text=MarkdownTextObject(text=label), fields=fields)], cut=False
        )
    text = as_json(args)
    head = label + "\n"
    limit = CODE_LIMIT - len(head)
    block = code_block(text, limit)
    cut = len(escape(text.replace("```", "`\u200b``"))) > limit - 6
    if cut:
        block += "\n" + msg.ARGS_CUT.format(shown=len(block), total=len(text))
    return ArgsView(blocks=[SectionBlock(text=MarkdownTextObject(text=head + block))], cut=cut)


def all_arguments_blocks(args: dict[str, Any]) -> list[Block]:
    """Every argument in full, in code blocks of at most 3000 characters each."""
    text = as_json(args)
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for char in text.replace("```", "`\u200b``"):
        piece = escape(char)
        if size + len(piece) > SECTION_LIMIT - 6:
            chunks.append("".join(current))
            current, size = [], 0
        current.append(piece)
        size += len(piece)
    chunks.append("".join(current))
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=f"```{c}```")) for c in chunks[:MODAL_BLOCKS]
    ]
    if len(chunks) > MODAL_BLOCKS:
        left = sum(len(c) for c in chunks[MODAL_BLOCKS:])
        note = escape_truncated(msg.ARGS_TOO_LONG_FOR_MODAL.format(left=left), SECTION_LIMIT)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=note)))
    return blocks


def changed_keys(original: dict[str, Any], edited: dict[str, Any]) -> list[str]:
    """The arguments an approver changed (``250`` and ``250.0`` are the same number)."""
    keys = [k for k in edited if k not in original or not same_value(original[k], edited[k])]
    return keys + [k for k in original if k not in edited]


def same_value(a: Any, b: Any) -> bool:
    """Equal as JSON values (``250`` and ``250.0`` are one number; ``1`` is not ``true``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def changes_side_by_side(original: dict[str, Any], edited: dict[str, Any]) -> SectionBlock | None:
    """Changed arguments side by side (was / approved) when each fits a field; else None."""
    keys = changed_keys(original, edited)
    if not keys or len(keys) > 5:
        return None
    fields = []
    for key in keys:
        was, now = field_value(original.get(key)), field_value(edited.get(key))
        name = field_key(key)
        if was is None or now is None or name is None:
            return None
        fields.append(MarkdownTextObject(text=msg.CHANGED_WAS.format(key=name, value=was)))
        fields.append(MarkdownTextObject(text=msg.CHANGED_NOW.format(key=name, value=now)))
    return SectionBlock(text=MarkdownTextObject(text=msg.CHANGED_LABEL), fields=fields)
