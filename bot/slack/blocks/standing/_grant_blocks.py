"""Block Kit of standing grants (SPEC 15): the card's "Approve and allow…" button, the compact
line an auto-approved call gets instead of a card (with Revoke), and the Home tab's grants.

Pure functions on ``slack_sdk.models.blocks``; buttons carry only the grant id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ButtonElement,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

import bot.slack._messages as msg
from agents import Grant, GrantRequest, ToolCallGrantedChunk
from bot.slack._ids import GRANT_ACTION, REVOKE_GRANT_ACTION
from bot.slack.blocks._mrkdwn import escape_truncated, mention

GRANT_LINE_BLOCK = "grant-line"
"""``block_id`` of an auto-approved call's line."""
HOME_GRANT_BLOCK = "home-grant-{n}"
"""``block_id`` of the Home tab's n-th grant."""
_PINS_LIMIT = 300
HOME_BLOCK_LIMIT = 100
"""Slack's limit on blocks in a Home view."""


def time_of_day(at: datetime) -> str:
    """``<!date^…^{time}>``: the time in each reader's zone (ISO fallback)."""
    return f"<!date^{int(at.timestamp())}^{{time}}|{at.isoformat(timespec='minutes')}>"


def _code(text: str) -> str:
    return escape_truncated(text, 80).replace("`", "'")


def grant_button(value: str) -> ButtonElement:
    """ "Approve and allow…": opens the grant modal (the card's call, by its reference)."""
    return ButtonElement(
        text=PlainTextObject(text=msg.GRANT_BUTTON), action_id=GRANT_ACTION, value=value
    )


def granted_too(grant: GrantRequest) -> str:
    """What a card approved with a grant adds, saying what it covers: "and allowed up to 10
    later calls like it in this thread for 1 h, whatever their `id`" (or "with the same
    arguments" when every argument is pinned)."""
    hours, rest = divmod(int(grant.seconds), 3600)
    duration = f"{hours} h" if hours and not rest else f"{max(1, int(grant.seconds) // 60)} min"
    where = msg.GRANT_SCOPE_THREAD if grant.within == "thread" else msg.GRANT_SCOPE_RESOURCE
    made = msg.GRANT_MADE.format(uses=grant.max_uses, where=where.lower(), duration=duration)
    if not grant.free_args:
        return made + msg.GRANT_ALL_PINNED
    free = ", ".join(f"`{_code(name)}`" for name in grant.free_args)
    return made + msg.GRANT_SOME_FREE.format(free=free)


def revoke_button(grant_id: str) -> ButtonElement:
    """Revoke: the grantor or an approver of its rule (anyone else gets an ephemeral)."""
    return ButtonElement(
        text=PlainTextObject(text=msg.GRANT_REVOKE_BUTTON),
        action_id=REVOKE_GRANT_ACTION,
        value=grant_id,
        style="danger",
    )


def granted_text(chunk: ToolCallGrantedChunk) -> str:
    """ "`delete-record` (id=43) auto-approved under @sam's grant (3 of 20 uses left, until
    14:05)": which call it was (its arguments, cut short), under whose grant."""
    args = ", ".join(f"{k}={_value(v)}" for k, v in chunk.args.items())
    shown = escape_truncated(args, 200).replace("`", "'")
    return msg.GRANTED_LINE.format(
        tool=_code(chunk.tool_name),
        args=f"(`{shown}`) " if args else "",
        who=mention(chunk.granted_by),
        left=max(0, chunk.max_uses - chunk.uses),
        max_uses=chunk.max_uses,
        until=time_of_day(chunk.expires_at),
    ) + _covers(chunk)


def _covers(chunk: ToolCallGrantedChunk) -> str:
    """What the grant covers: " · it covers `delete-record` in this thread, whatever their
    `id`" (or "with the same arguments" when every argument is pinned)."""
    where = msg.GRANT_SCOPE_THREAD if chunk.within == "thread" else msg.GRANT_SCOPE_RESOURCE
    if chunk.free_args:
        free = ", ".join(f"`{_code(name)}`" for name in chunk.free_args)
        args = msg.GRANT_SOME_FREE.format(free=free).removeprefix(", ")
    else:
        args = msg.GRANT_ALL_PINNED.removeprefix(", ")
    tool = f"`{_code(chunk.tool_name)}`"
    return msg.GRANTED_COVERS.format(tool=tool, where=where.lower(), args=args)


def granted_line(chunk: ToolCallGrantedChunk) -> list[Block]:
    """The compact line of a call a grant approved, with Revoke."""
    return [
        SectionBlock(
            block_id=GRANT_LINE_BLOCK,
            text=MarkdownTextObject(text=granted_text(chunk)),
            accessory=revoke_button(chunk.grant_id),
        )
    ]


def revoked_line(text: str, by: str, at: datetime) -> list[Block]:
    """The line once its grant was revoked: no button, who revoked it and when."""
    when = f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{at.isoformat()}>"
    revoked = msg.GRANT_REVOKED_LINE.format(who=mention(by), when=when)
    return [
        SectionBlock(block_id=GRANT_LINE_BLOCK, text=MarkdownTextObject(text=f"{text}\n{revoked}"))
    ]


def granted_fallback(chunk: ToolCallGrantedChunk) -> str:
    return escape_truncated(msg.GRANTED_FALLBACK.format(tool=chunk.tool_name), 300)


def home_grants(grants: list[Grant]) -> list[Block]:
    """ "Your active grants", each with Revoke (after the waiting list)."""
    blocks: list[Block] = [HeaderBlock(text=PlainTextObject(text=msg.HOME_GRANTS_HEADER))]
    if not grants:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=msg.HOME_GRANTS_NONE)))
        return blocks
    for n, grant in enumerate(grants[:20]):
        blocks.append(
            SectionBlock(
                block_id=HOME_GRANT_BLOCK.format(n=n),
                text=MarkdownTextObject(text=_home_item(grant)),
                accessory=revoke_button(grant.grant_id),
            )
        )
    return blocks


def with_grants(view: View, grants: list[Grant]) -> View:
    """The Home ``view`` with "Your active grants" after what it lists (within Slack's
    ``HOME_BLOCK_LIMIT`` blocks: the grants that do not fit are left out)."""
    room = HOME_BLOCK_LIMIT - len(view.blocks) - 1
    added = home_grants(grants)
    if room < 2:
        return view
    if len(added) > room:
        added = added[:room]
    return View(type="home", blocks=[*view.blocks, DividerBlock(), *added])


def _home_item(grant: Grant) -> str:
    if grant.resource_id is not None:
        scope = msg.HOME_GRANT_RESOURCE.format(channel=grant.resource_id.rsplit(":", 1)[-1])
    else:
        scope = msg.HOME_GRANT_THREAD
    pins = ", ".join(f"{k}={_value(v)}" for k, v in grant.pins.items()) or "—"
    if grant.free_args:
        pins += " · free: " + ", ".join(grant.free_args)
    return msg.HOME_GRANT_ITEM.format(
        tool=_code(grant.tool_name),
        scope=scope,
        left=max(0, grant.max_uses - grant.uses),
        max_uses=grant.max_uses,
        until=time_of_day(grant.expires_at),
        pins=escape_truncated(pins, _PINS_LIMIT),
    )


def _value(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)
