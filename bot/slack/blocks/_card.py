"""The approval card (SPEC 12), pending and decided: pure functions over slack_sdk's blocks.
Pending: a header "Approve <title>?", the tool (``server · tool`` for MCP tools, "destructive"
when its annotations say so), on an edited proposal who changed what from what, why the call
waits and under which rule (``_why``), the arguments (``_args``), a context line (who asked,
via which agents, who may approve, quorum progress, expiry), then Approve (with a confirm
dialog when ``CardRules.confirm``), Edit, Decline. Decided: the outcome in the header, who,
when, the reason, why it waited, and changed arguments beside the original; no decision
buttons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

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
from agents import Decision, Decline
from bot.policy._card_rules import CardRules
from bot.slack._ids import (
    APPROVAL_BLOCK,
    APPROVE_ACTION,
    DECLINE_ACTION,
    EDIT_ACTION,
    EXTEND_ACTION,
    SHOW_ALL_ACTION,
    WITHDRAW_ACTION,
)
from bot.slack.blocks._args import args_view, changes_side_by_side, reveal
from bot.slack.blocks._mrkdwn import escape_truncated, mention
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks._why import Why, edit_line, why_line, why_text
from bot.slack.blocks.standing._escalation import escalated_line
from bot.slack.blocks.standing._grant_blocks import grant_button

HEADER_LIMIT = 150
"""Slack's limit on a header's text."""
FALLBACK_LIMIT = 300
"""Notification text is short."""
SHOW_ALL_BLOCK = "approval-args"
"""``block_id`` of the "Show all" button."""
WHY_BLOCK = "approval-why"
"""``block_id`` of the context line saying why the call waits."""
NOT_SELF_BLOCK = "approval-context-not-self"
"""``block_id`` of a pending card's context line when the policy in force forbids its requester
to approve it (absent otherwise): a client such as the local workspace hints from it."""
_NAME_LIMIT = 80


@dataclass(frozen=True, kw_only=True)
class CardView:
    """What an approval card shows."""

    ref: ApprovalRef
    """Which pending call the buttons decide."""
    tool_name: str
    """The tool that will run."""
    args: dict[str, Any]
    """The arguments it will run with."""
    requester: str | None = None
    """Slack user id of the person whose request led to this call."""
    agent_path: tuple[str, ...] = field(default_factory=tuple)
    """The chain of agents, when a sub-agent asks."""
    title: str | None = None
    """The tool's human title, else its id (SPEC 2); None: the header names ``tool_name``."""
    server: str | None = None
    """For an MCP tool: its server (``github``), shown as ``github · create_issue``."""
    remote_name: str | None = None
    """For an MCP tool: its name on the server."""
    destructive: bool = False
    """The tool's annotations do not rule out destruction."""
    rules: CardRules = field(default_factory=CardRules)
    """Who may approve; whether Approve confirms."""
    approved_by: tuple[str, ...] = ()
    """Who approved so far (quorum calls)."""
    expires_at: datetime | None = None
    """When the call expires (declined); None: never."""
    grantable: bool = False
    """Its rule allows standing grants: the card offers "Approve and allow…" (SPEC 15)."""
    extendable: bool = False
    """Its rule allows more time (``max_ttl_seconds`` above its TTL): the card offers
    "Extend" (SPEC 12)."""
    origin: str | None = None
    """Where a gateway call came from (SPEC 17: the client, the MCP server), as mrkdwn."""
    why: Why = field(default_factory=Why)
    """Why the call waits and under which rule (what the gate stored with it)."""
    edited_from: dict[str, Any] | None = None
    """An edited proposal: the arguments shown before the edit (None: not edited)."""
    edited_by: str | None = None
    """Who made that edit."""


@dataclass(frozen=True, kw_only=True)
class Decided:
    """A card's decision as shown: what was decided, by whom, when."""

    decision: Decision | None
    """The runtime's decision: ``Approve`` (its ``args`` are edited arguments, shown next to the
    original), ``Decline`` (its ``reason`` is shown escaped), ``Expire``; None: interrupted."""
    by: str | None
    """Slack user id of who decided (None: the system, e.g. expiry)."""
    at: datetime
    """When (timezone-aware)."""
    approvers: tuple[str, ...] = ()
    """A quorum call's approvers, in the order they approved (``by`` is the last); empty:
    ``by`` alone decided."""
    interrupted: bool = False
    """The approved call's outcome is unknown: the instance running it stopped (``by`` still
    names who approved it)."""
    ran_again: bool = False
    """The approved call was run again by the instance that took it over (idempotent)."""

    @property
    def deciders(self) -> tuple[str | None, ...]:
        """Who the card names as having decided, in order."""
        return self.approvers or (self.by,)

    @property
    def kind(self) -> str:
        """How the card names the outcome (``interrupted`` when the run of it stopped)."""
        return "interrupted" if self.interrupted else shown_kind(self.decision)


def slack_date(at: datetime) -> str:
    """``<!date^…>``: shown in each reader's time zone, with an ISO fallback."""
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{at.isoformat()}>"


def card_title(card: CardView) -> str:
    """The tool's name for people: its title, else its id (the description is never a name)."""
    title = (card.title or "").strip().splitlines()
    return reveal(title[0] if title else card.tool_name)


def header_block(template: str, card: CardView) -> HeaderBlock:
    room = HEADER_LIMIT - len(template.format(title=""))
    title = card_title(card)
    if len(title) > room:
        title = title[: room - 1] + "…"
    return HeaderBlock(text=PlainTextObject(text=template.format(title=title)))


def _code_name(text: str) -> str:
    return escape_truncated(reveal(text), _NAME_LIMIT).replace("`", "'")


def tool_label(card: CardView) -> str:
    """``github · create_issue`` for an MCP tool, else the tool's id."""
    if card.server and card.remote_name:
        return f"{card.server} · {card.remote_name}"
    return card.tool_name


def tool_section(card: CardView) -> SectionBlock:
    line = msg.TOOL_LINE.format(tool=_code_name(tool_label(card)))
    if card.destructive:
        line += " · " + msg.DESTRUCTIVE
    return SectionBlock(text=MarkdownTextObject(text=line))


def approver_mention(approver: str) -> str:
    """``<@U…>`` for a user, ``<!subteam^S…>`` for a user group."""
    if approver[:1] == "S" and approver.isalnum():
        return f"<!subteam^{approver}>"
    return mention(approver)


def who_may_approve(card: CardView) -> str:
    """Who may approve, as the policy in force says (``CardRules``): the requester is named as
    excluded only when self-approval is off for this call."""
    rules = card.rules
    if rules.approvers:
        text = msg.APPROVERS_LIST.format(
            who=", ".join(approver_mention(a) for a in rules.approvers[:20])
        )
    else:
        text = msg.APPROVERS_ANYONE
    if rules.allow_self_approval:
        return text
    if card.requester and mention(card.requester).startswith("<@"):
        return text + msg.APPROVERS_NOT_SELF_NAMED.format(user=card.requester)
    return text + msg.APPROVERS_NOT_SELF


def names(users: tuple[str | None, ...]) -> str:
    """``<@U1>``, ``<@U1> and <@U2>``, ``<@U1>, <@U2> and <@U3>``: people in order."""
    shown = [mention(u) for u in users[:20]]
    if len(shown) <= 1:
        return shown[0] if shown else mention(None)
    return msg.AND.format(rest=", ".join(shown[:-1]), last=shown[-1])


def quorum_progress(card: CardView) -> str | None:
    """``1 of 2 approvals: <@U1>`` for a quorum call; None when one approval decides."""
    needed = card.rules.approvals_required
    if needed <= 1:
        return None
    count = len(card.approved_by)
    if not count:
        return msg.QUORUM.format(count=0, needed=needed)
    who = ", ".join(mention(a) for a in card.approved_by[:20])
    return msg.QUORUM_BY.format(count=count, needed=needed, who=who)


def requested(card: CardView) -> str:
    if card.requester and mention(card.requester).startswith("<@"):
        return msg.REQUESTED_BY.format(user=card.requester)
    return msg.REQUESTED_BY_UNKNOWN


def context_block(card: CardView, *, pending: bool) -> ContextBlock:
    parts = [requested(card)]
    if len(card.agent_path) > 1:
        parts.append(msg.ASKED_VIA.format(path=_code_name(" → ".join(card.agent_path))))
    if card.origin:
        parts.append(card.origin)
    if pending:
        parts.append(who_may_approve(card))
        escalated = escalated_line(card.rules, approver_mention)
        if escalated:
            parts.append(escalated)
        progress = quorum_progress(card)
        if progress:
            parts.append(progress)
        if card.expires_at is not None:
            parts.append(msg.EXPIRES.format(when=slack_date(card.expires_at)))
    not_self = pending and not card.rules.allow_self_approval
    return ContextBlock(
        block_id=NOT_SELF_BLOCK if not_self else None,
        elements=[MarkdownTextObject(text=p[:3000]) for p in parts],
    )


def why_of(card: CardView) -> str:
    """Why the card's call waits, in words (escaped mrkdwn; "" when nothing was recorded)."""
    rules = card.rules
    return why_text(
        card.why,
        approvers=rules.approvers,
        approvals=rules.approvals_required,
        named=approver_mention,
    )


def why_blocks(card: CardView, *, pending: bool) -> list[Block]:
    """What an edit changed (an edited proposal), then why the call waits and under which
    rule: a section and a context line, or nothing when neither is known."""
    blocks: list[Block] = []
    if card.edited_from is not None:
        line = edit_line(card.edited_from, card.args, card.edited_by, card.why)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=line[:3000])))
    why = why_line(why_of(card), pending=pending)
    if why is not None:
        blocks.append(ContextBlock(block_id=WHY_BLOCK, elements=[MarkdownTextObject(text=why)]))
    return blocks


def show_all_button(card: CardView) -> ButtonElement:
    """ "Show all": a modal with every argument of the call."""
    return ButtonElement(
        text=PlainTextObject(text=msg.SHOW_ALL_BUTTON),
        action_id=SHOW_ALL_ACTION,
        value=card.ref.encode(),
    )


def _show_all(card: CardView) -> ActionsBlock:
    return ActionsBlock(block_id=SHOW_ALL_BLOCK, elements=[show_all_button(card)])


def args_blocks(card: CardView, edited: dict[str, Any] | None) -> list[Block]:
    original = args_view(
        msg.ARGUMENTS_LABEL if edited is None else msg.ORIGINAL_ARGUMENTS_LABEL, card.args
    )
    blocks = list(original.blocks)
    cut = original.cut
    if edited is not None:
        changes = changes_side_by_side(card.args, edited)
        if changes is not None:
            blocks.append(changes)
        else:
            approved = args_view(msg.APPROVED_ARGUMENTS_LABEL, edited)
            blocks.extend(approved.blocks)
            cut = cut or approved.cut
    if cut:
        blocks.append(_show_all(card))
    return blocks


def confirm_dialog(card: CardView) -> ConfirmObject:
    tool = escape_truncated(card_title(card), 150)
    return ConfirmObject(
        title=PlainTextObject(text=msg.CONFIRM_TITLE),
        text=MarkdownTextObject(text=escape_truncated(msg.CONFIRM_TEXT.format(tool=tool), 300)),
        confirm=PlainTextObject(text=msg.CONFIRM_YES),
        deny=PlainTextObject(text=msg.CANCEL),
        style="danger" if card.destructive else "primary",
    )


def decision_buttons(
    card: CardView, block_id: str = APPROVAL_BLOCK, extra: ButtonElement | None = None
) -> ActionsBlock:
    """Approve (primary; confirm when the rules say so), Edit, Decline, Withdraw, Extend
    (where the rule allows more time), ``extra``."""
    value = card.ref.encode()
    return ActionsBlock(
        block_id=block_id,
        elements=[
            ButtonElement(
                text=PlainTextObject(text=msg.APPROVE_BUTTON),
                action_id=APPROVE_ACTION,
                value=value,
                style="primary",
                confirm=confirm_dialog(card) if card.rules.confirm else None,
            ),
            *([grant_button(value)] if card.grantable else []),
            ButtonElement(
                text=PlainTextObject(text=msg.EDIT_BUTTON), action_id=EDIT_ACTION, value=value
            ),
            ButtonElement(
                text=PlainTextObject(text=msg.DECLINE_BUTTON),
                action_id=DECLINE_ACTION,
                value=value,
                style="danger",
            ),
            withdraw_button(value),
            *([extend_button(value)] if card.extendable else []),
            *([extra] if extra is not None else []),
        ],
    )


def withdraw_button(value: str) -> ButtonElement:
    """Withdraw: the requester takes back their own call (anyone else gets an ephemeral)."""
    return ButtonElement(
        text=PlainTextObject(text=msg.WITHDRAW_BUTTON), action_id=WITHDRAW_ACTION, value=value
    )


def extend_button(value: str) -> ButtonElement:
    """Extend: who may approve the call keeps it decidable for longer (SPEC 12)."""
    return ButtonElement(
        text=PlainTextObject(text=msg.EXTEND_BUTTON), action_id=EXTEND_ACTION, value=value
    )


def approval_card(card: CardView) -> list[Block]:
    """The card asking for a decision."""
    return [
        header_block(msg.APPROVAL_HEADER, card),
        tool_section(card),
        *why_blocks(card, pending=True),
        *args_blocks(card, None),
        context_block(card, pending=True),
        decision_buttons(card),
    ]


def approval_fallback(card: CardView) -> str:
    """The notification text of an approval card."""
    return escape_truncated(msg.APPROVAL_FALLBACK.format(tool=named(card)), FALLBACK_LIMIT)


def named(card: CardView) -> str:
    """``Delete a record (delete_record)``: the title and what runs, for notifications."""
    title, label = card_title(card), tool_label(card)
    return label if title == label else f"{title} ({label})"


def shown_kind(decision: Decision | None) -> str:
    """How a card names an outcome: a decline by its requester is a withdrawal."""
    if decision is None:
        return "interrupted"
    if isinstance(decision, Decline) and decision.withdrawn:
        return "withdraw"
    return decision.kind
