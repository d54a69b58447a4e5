"""The modals' two halves: a button opens one (Decline, Edit, Provide details), its Submit
decides. Opening asks the rules early, for a nicer answer than a form that cannot be sent;
correctness comes from submitting: the runtime checks who may decide and the state inside the
claim (``decide``; someone may have decided while the modal was open). Validation errors show
inside the modal (``response_action: errors``) before anything is claimed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from agents import Approve, Decision, Decline, NotAllowedToDecide, PendingToolCall, Resume
from bot.policy import Refusal
from bot.slack._ids import REASON_BLOCK, thread_id
from bot.slack._services import Services
from bot.slack.blocks._args import changed_keys
from bot.slack.blocks._card import tool_label
from bot.slack.blocks._forms import (
    VALUE_ACTION,
    FormField,
    form_fields,
    read_edit,
    read_form,
    validate,
)
from bot.slack.blocks._modal_views import (
    arguments_modal,
    decline_modal,
    edit_modal,
    edit_warning,
    provide_modal,
)
from bot.slack.blocks._refs import ApprovalRef, ModalRef
from bot.slack.deciding._clicks import (
    Attempt,
    attempt_from_click,
    check,
    decide,
    record_refusal,
    tell,
)
from bot.slack.deciding._expiry import expire_call
from bot.slack.deciding._told import refusal_text
from bot.slack.deciding._unrecorded import not_recorded_text, recording_outage
from bot.slack.deciding._workspace import Choice
from bot.slack.receiving._payloads import BlockActions, ViewSubmission
from storage import utcnow

logger = logging.getLogger(__name__)


def proposed(choice: Choice) -> Decision:
    """The decision a modal leads to, before its form is filled (what the policy checks)."""
    if choice == "edit":
        return Approve(args={})
    if choice == "provide":
        return Resume(data={})
    return Decline() if choice == "decline" else Approve()


async def open_modal(services: Services, click: BlockActions, choice: Choice) -> None:
    """After the click's ack: authorize, then ``views.open`` with its ``trigger_id``."""
    attempt = attempt_from_click(click, proposed(choice))
    if attempt is None or click.trigger_id is None:
        logger.warning("ignoring a %s click without a reference or trigger_id", choice)
        return
    ref = attempt.ref
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    thread_ts = card.thread_ts if card else attempt.thread_ts
    if thread_ts is None:
        await tell(services, attempt, msg.NO_LONGER_PENDING, None)
        return
    refusal = await check(services, attempt, card)
    if refusal is not None:
        await tell(services, attempt, refusal.text, thread_ts)
        return
    meta = ModalRef(
        ref=ref,
        team=attempt.team,
        channel=attempt.channel,
        message_ts=attempt.message_ts,
        thread_ts=thread_ts,
    )
    pending = await services.agent.pending_call(run_id=ref.run_id, tool_call_id=ref.tool_call_id)
    now = utcnow()
    if pending is not None and pending.expires_at is not None and now >= pending.expires_at:
        await tell(services, attempt, msg.EXPIRED, thread_ts)  # no form for a dead call,
        await expire_call(  # and its card flips to "Expired" now, not at the next sweep
            services,
            run_id=ref.run_id,
            tool_call_id=ref.tool_call_id,
            thread_id=thread_id(attempt.team, attempt.channel, thread_ts),
            now=now,
            call=pending,
            card=card,
        )
        return
    if await _refused_early(services, attempt, meta, pending):
        return
    view = _view(services, meta, choice, pending, card.view.tool_name if card else None)
    if isinstance(view, str):
        await tell(services, attempt, view, thread_ts)
        return
    try:
        await services.client.views_open(trigger_id=click.trigger_id, view=view)
    except SlackApiError as exc:
        logger.warning("could not open the %s modal: %s", choice, exc.response.get("error"))


async def _refused_early(
    services: Services, attempt: Attempt, meta: ModalRef, pending: PendingToolCall | None
) -> bool:
    """Ask the gate whether this person may decide before opening (it judges again, inside
    the claim, on submit); only a refusal of the person stops the form here."""
    if pending is None or attempt.decision.kind == "expire":
        return False
    refusal = await refusal_of(services, attempt, pending)
    if refusal is None:
        return False
    await record_refusal(services, attempt, refusal.rule, meta.thread_ts)
    await tell(services, attempt, refusal_text(refusal), meta.thread_ts)
    return True


def _view(
    services: Services,
    meta: ModalRef,
    choice: Choice,
    pending: PendingToolCall | None,
    tool_name: str | None,
) -> dict[str, Any] | str:
    """The modal to open, or the text saying why there is none."""
    if choice == "decline":
        return decline_modal(meta, tool_name or "?")
    form = pending_form(services, pending, choice)
    if isinstance(form, str):
        return form
    pending, _, fields = form
    if choice == "edit":
        warnings = tuple(edit_warning(t) for t in services.policy.stricter_by_args(pending))
        return edit_modal(meta, pending.tool_name, fields, pending.args, warnings)
    return provide_modal(meta, pending.tool_name, fields)


def pending_form(
    services: Services, pending: PendingToolCall | None, choice: Choice
) -> tuple[PendingToolCall, type[BaseModel] | None, list[FormField]] | str:
    """The pending call, the schema of its form and the form's fields; or why there are none."""
    if pending is None or pending.requires_approval != (choice == "edit"):
        return msg.NO_LONGER_PENDING
    tool = services.agent.tool_for(pending)
    model = None if tool is None else tool.input_schema if choice == "edit" else tool.resume_schema
    if model is not None:
        return pending, model, form_fields(model.model_json_schema())
    if choice == "provide" and pending.resume_schema:
        return pending, None, form_fields(pending.resume_schema)
    return msg.EDIT_UNAVAILABLE


def modal_attempt(sub: ViewSubmission, meta: ModalRef, decision: Decision, **extra: Any) -> Attempt:
    """The ``Attempt`` a modal's Submit makes (source ``modal``)."""
    return Attempt(
        ref=meta.ref,
        decision=decision,
        user=sub.user.id,
        user_team=sub.user.team_id,
        team=meta.team,
        channel=meta.channel,
        message_ts=meta.message_ts,
        thread_ts=meta.thread_ts,
        source="modal",
        **extra,
    )


@dataclass(frozen=True, kw_only=True)
class Submission:
    """What a Submit means: errors to show in the modal, an attempt to decide, or a note."""

    errors: dict[str, str] = field(default_factory=dict)
    """Block id → message; non-empty: the modal stays open with them, nothing else happens."""
    attempt: Attempt | None = None
    """What to decide (after the ack)."""
    note: str | None = None
    """Told to the user instead of deciding (the call is no longer pending …)."""


async def submitted(services: Services, sub: ViewSubmission, choice: Choice) -> Submission:
    """Read and validate a Submit. Nothing is claimed here: the caller acks (with the errors)
    and hands the attempt to ``decide``, which re-checks authorization and state."""
    meta = ModalRef.decode(sub.view.private_metadata)
    if meta is None:
        logger.warning("ignoring a %s submission without our private_metadata", choice)
        return Submission()
    if choice == "decline":
        entry = sub.values.get(REASON_BLOCK, {}).get(VALUE_ACTION, {})
        reason = str(entry.get("value") or "").strip() or None
        return Submission(attempt=modal_attempt(sub, meta, Decline(reason=reason)))
    ref = meta.ref
    try:
        pending = await services.agent.pending_call(
            run_id=ref.run_id, tool_call_id=ref.tool_call_id
        )
    except Exception as exc:  # the call cannot be read: its decision could not be recorded
        note = unrecordable(services, exc)
        return Submission(attempt=modal_attempt(sub, meta, proposed(choice)), note=note)
    form = pending_form(services, pending, choice)
    if isinstance(form, str):
        return Submission(attempt=modal_attempt(sub, meta, proposed(choice)), note=form)
    pending, model, fields = form
    if choice == "edit":
        data, errors = read_edit(fields, sub.values, pending.args)
    else:
        data, errors = read_form(fields, sub.values)
    errors = errors or validate(model, fields, data)
    if errors:
        return Submission(errors=errors)
    if choice == "edit":
        edited = data if changed_keys(pending.args, data) else None  # untouched: as shown
        return Submission(attempt=modal_attempt(sub, meta, Approve(args=edited)))
    question = (pending.tool_name, pending.suspend_payload)
    return Submission(attempt=modal_attempt(sub, meta, Resume(data=data), question=question))


def unrecordable(services: Services, exc: Exception) -> str:
    """What a Submit is told when reading its call failed: nothing was recorded (storage or
    Redis down, logged once); anything else is raised again."""
    service = recording_outage(exc)
    if service is None:
        raise exc
    services.outages.down(service, exc)
    return not_recorded_text(service)


async def finish_submission(services: Services, submission: Submission) -> None:
    """After the ack: decide the attempt, or tell the user why not (background runner)."""
    attempt = submission.attempt
    if attempt is None:
        return
    if submission.note is not None:
        await tell(services, attempt, submission.note, attempt.thread_ts)
        return
    await decide(services, attempt)


async def show_all_arguments(services: Services, click: BlockActions) -> None:
    """After the click's ack: a modal with every argument of the card, in full."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    if ref is None or click.trigger_id is None:
        logger.warning("ignoring a Show all click without a reference or trigger_id")
        return
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    if card is None:
        logger.warning("ignoring a Show all click on an unrecorded card")
        return
    view = arguments_modal(tool_label(card.view), card.view.args)
    try:
        await services.client.views_open(trigger_id=click.trigger_id, view=view)
    except SlackApiError as exc:
        logger.warning("could not open the arguments modal: %s", exc.response.get("error"))


async def refusal_of(
    services: Services, attempt: Attempt, pending: PendingToolCall
) -> Refusal | None:
    """The gate's refusal of ``attempt``'s person taking its kind of decision on ``pending``
    (what they would enter in a form is not known yet: edits are asked as the call stands)."""
    decision: Decision = attempt.decision
    if isinstance(decision, Approve):
        decision = Approve(args=dict(pending.args))  # an edit: no second-approval refusal
    verdict = await services.agent.ask(
        decision, call=pending, run_id=attempt.ref.run_id, decided_by=attempt.user
    )
    refused = verdict.refused
    return Refusal.of(refused) if isinstance(refused, NotAllowedToDecide) else None
