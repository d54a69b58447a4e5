"""Standing grants in Slack (SPEC 15): "Approve and allow…" opens the grant modal, its Submit
approves with a grant (the runtime checks the rule's bounds inside the claim, as for any
decision); Revoke on an auto-approved call's line or on the Home tab revokes one, and refuses
anyone but its grantor or an approver of its rule with an ephemeral.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from agents import Approve, GrantRequest
from agents.errors import GrantNotAllowed
from bot.slack._services import Services
from bot.slack.blocks._mrkdwn import mention
from bot.slack.blocks._refs import ModalRef
from bot.slack.blocks.standing._grant_blocks import revoked_line
from bot.slack.blocks.standing._grant_modal import grant_modal, read_grant
from bot.slack.deciding._clicks import attempt_from_click, check, record_refusal, tell
from bot.slack.deciding._modals import Submission, modal_attempt, refusal_of, unrecordable
from bot.slack.deciding._told import refusal_text
from bot.slack.delivery.home._publish import publish_home
from bot.slack.receiving._payloads import BlockActions, ViewSubmission
from storage import utcnow

logger = logging.getLogger(__name__)

_ANY_GRANT = GrantRequest(seconds=1, max_uses=1)
"""What the policy is asked about before the form is filled: an approval (with a grant)."""


async def open_grant_modal(services: Services, click: BlockActions) -> None:
    """After the click's ack: the modal, when the user may approve and the rule allows grants."""
    attempt = attempt_from_click(click, Approve(grant=_ANY_GRANT))
    if attempt is None or click.trigger_id is None:
        logger.warning("ignoring an Approve and allow click without a reference or trigger_id")
        return
    ref = attempt.ref
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    thread_ts = card.thread_ts if card else attempt.thread_ts
    pending = await services.agent.pending_call(run_id=ref.run_id, tool_call_id=ref.tool_call_id)
    if pending is None or thread_ts is None:
        await tell(services, attempt, msg.NO_LONGER_PENDING, thread_ts)
        return
    if not pending.grantable:
        await tell(services, attempt, msg.GRANT_UNAVAILABLE, thread_ts)
        return
    refusal = await check(services, attempt, card)
    if refusal is not None:
        await tell(services, attempt, refusal.text, thread_ts)
        return
    early = await refusal_of(services, attempt, pending)
    if early is not None:  # judged again inside the claim on Submit
        await record_refusal(services, attempt, early.rule, thread_ts)
        await tell(services, attempt, refusal_text(early), thread_ts)
        return
    meta = ModalRef(
        ref=ref,
        team=attempt.team,
        channel=attempt.channel,
        message_ts=attempt.message_ts,
        thread_ts=thread_ts,
    )
    try:
        await services.client.views_open(
            trigger_id=click.trigger_id, view=grant_modal(meta, pending)
        )
    except SlackApiError as exc:
        logger.warning("could not open the grant modal: %s", exc.response.get("error"))


async def grant_submitted(services: Services, sub: ViewSubmission) -> Submission:
    """A Submit of the grant modal: an attempt to approve with the grant it asks for."""
    meta = ModalRef.decode(sub.view.private_metadata)
    if meta is None:
        logger.warning("ignoring a grant submission without our private_metadata")
        return Submission()
    ref = meta.ref
    try:
        pending = await services.agent.pending_call(
            run_id=ref.run_id, tool_call_id=ref.tool_call_id
        )
    except Exception as exc:
        note = unrecordable(services, exc)
        return Submission(attempt=modal_attempt(sub, meta, Approve()), note=note)
    if pending is None:
        attempt = modal_attempt(sub, meta, Approve())
        return Submission(attempt=attempt, note=msg.NO_LONGER_PENDING)
    grant = read_grant(sub.values, pending)
    return Submission(attempt=modal_attempt(sub, meta, Approve(grant=grant)))


async def revoke_clicked(services: Services, click: BlockActions) -> None:
    """Revoke the grant of the clicked line (or Home tab row) as the clicking user."""
    grant_id = click.actions[0].value if click.actions else None
    if not grant_id:
        return
    user = click.user.id
    try:
        grant = await services.agent.revoke_grant(grant_id, revoked_by=user)
    except GrantNotAllowed:
        await _tell(services, click, msg.GRANT_NOT_REVOKED)
        return
    if click.channel_id is None:  # the Home tab
        await publish_home(services, user)
        return
    text = (
        msg.GRANTED_FALLBACK.format(tool=f"`{grant.tool_name}`") + f" ({mention(grant.granted_by)})"
    )
    try:
        await services.client.chat_update(
            channel=click.channel_id,
            ts=click.message_ts or "",
            text=text,
            blocks=[b.to_dict() for b in revoked_line(text, user, utcnow())],
        )
    except SlackApiError as exc:
        logger.warning("could not update the grant line: %s", exc.response.get("error"))
    await _tell(services, click, msg.GRANT_REVOKED)


async def _tell(services: Services, click: BlockActions, text: str) -> None:
    if click.channel_id is None:
        return
    try:
        await services.client.chat_postEphemeral(
            channel=click.channel_id, user=click.user.id, text=text, thread_ts=click.thread_ts
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s: %s", click.user.id, exc.response.get("error"))
