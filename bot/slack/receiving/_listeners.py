"""The bolt listeners: each acks, parses its payload, and hands the work to the runner."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from bot.ops._outage import Service, unavailable
from bot.slack._ids import (
    APPROVE_ACTION,
    APPROVE_ALL_ACTION,
    ASK_AGAIN_ACTION,
    DECLINE_ACTION,
    DECLINE_ALL_ACTION,
    DECLINE_VIEW,
    EDIT_ACTION,
    EDIT_VIEW,
    EXTEND_ACTION,
    PROVIDE_ACTION,
    PROVIDE_VIEW,
    ROW_ACTION,
    SHOW_ALL_ACTION,
    WITHDRAW_ACTION,
)
from bot.slack._services import Services
from bot.slack.deciding._batch import handle_all
from bot.slack.deciding._clicks import handle_click, handle_withdraw
from bot.slack.deciding._conversation import admit, answer
from bot.slack.deciding._expiry import ask_again, extend_card
from bot.slack.deciding._grants import open_grant_modal
from bot.slack.deciding._modals import finish_submission, open_modal, show_all_arguments, submitted
from bot.slack.deciding._rows import row_chosen
from bot.slack.deciding._unrecorded import Asker, or_not_recorded
from bot.slack.deciding._workspace import Choice
from bot.slack.delivery.home._listing import card_click
from bot.slack.delivery.home._publish import publish_home
from bot.slack.receiving._assistant import create_assistant, open_messages_tab
from bot.slack.receiving._payloads import (
    AppContextEnvelope,
    BlockActions,
    EventEnvelope,
    HomeEnvelope,
    MessageEvent,
    SubteamEnvelope,
    ViewSubmission,
)

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


def register_listeners(app: AsyncApp, services: Services) -> None:
    """Attach every listener of the bot to ``app``."""

    async def on_event(body: dict[str, Any], context: AsyncBoltContext) -> BoltResponse | None:
        envelope = _parsed(EventEnvelope, body, "an event")
        if envelope is None:
            return None
        event = envelope.event
        if not event.is_from_person:
            return None
        team = envelope.team_id or event.team or context.team_id
        if team is None:
            logger.warning("ignoring event %s without a team id", envelope.event_id)
            return None
        try:
            if not await admit(services, event, team=team, event_id=envelope.event_id):
                return None
        except Exception as exc:
            service = unavailable(exc)
            if service is None:
                raise
            services.outages.down(service, exc)
            if event.is_addressed and services.outages.first_notice(service, event.thread_key):
                note = say_unavailable(services, event, service)  # Slack retries it; the
                services.runner.submit(note, name=f"unavailable-{event.ts}")  # person is told
            return BoltResponse(status=503, body=json.dumps({"error": f"{service}_unavailable"}))
        services.outages.up("storage")
        services.outages.up("redis")
        services.runner.submit(
            answer(services, event, team=team, bot_user_id=context.bot_user_id),
            name=f"message-{event.channel}-{event.ts}",
        )
        return None

    async def on_home_opened(body: dict[str, Any]) -> None:
        envelope = _parsed(HomeEnvelope, body, "an app_home_opened")
        if envelope is None:
            return
        user = envelope.event.user
        if envelope.event.tab == "home":
            services.home_viewers.opened(user)
            services.runner.submit(publish_home(services, user), name=f"home-{user}")
        elif envelope.event.tab == "messages":  # the agent view's conversations
            opened = open_messages_tab(services, user, envelope.event.channel)
            services.runner.submit(opened, name=f"messages-tab-{user}")

    async def on_context_changed(body: dict[str, Any]) -> None:
        _parsed(AppContextEnvelope, body, "an app_context_changed")  # what the person looks
        return None  # at: acknowledged; the agent is not told which channel it is

    async def on_subteam(body: dict[str, Any]) -> None:
        envelope = _parsed(SubteamEnvelope, body, "a user-group event")  # unreadable: forget all
        services.policy.membership_changed(None if envelope is None else envelope.event.group)
        services.names.forget()  # a group renamed: its handle is looked up again

    async def on_card(click: BlockActions, choice: Choice) -> None:
        if click.channel_id is None:  # from the Home tab: decide on the card in its thread
            on_card = await card_click(services, click)
            if on_card is None:
                await publish_home(services, click.user.id)
                return
            click = on_card
        if choice == "approve":
            await handle_click(services, click)
        elif choice == "withdraw":
            await handle_withdraw(services, click)
        else:
            await open_modal(services, click, choice)

    def acted(
        name: str, work_of: Callable[[BlockActions], Awaitable[None]], what: str = "a click"
    ) -> Any:
        """A listener acknowledging a click at once, then doing ``work_of(click)`` on the
        runner; a decision it cannot record is told to the person (``or_not_recorded``)."""

        async def listener(ack: AsyncAck, body: dict[str, Any]) -> None:
            await ack()
            click = _parsed(BlockActions, body, what)
            if click is not None:
                work = or_not_recorded(services, asker(click), work_of(click))
                services.runner.submit(work, name=f"{name}-{click.user.id}")

        listener.__name__ = f"on_{name.replace('-', '_')}"
        return listener

    def on_click(choice: Choice) -> Any:
        return acted(choice, lambda click: on_card(click, choice))

    async def on_show_all(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        click = _parsed(BlockActions, body, "a click")
        if click is not None:
            services.runner.submit(show_all_arguments(services, click), name="show-all")

    async def row(click: BlockActions) -> None:
        """A batch card row's ⋯ choice: the call's own button, as if clicked."""
        chosen = await row_chosen(services, click)
        if chosen is None:
            return
        kind, as_button = chosen
        if kind == "show-all":
            await show_all_arguments(services, as_button)
        elif kind == "grant":
            await open_grant_modal(services, as_button)
        else:
            await on_card(as_button, kind)

    def on_all(kind: Literal["approve", "decline"]) -> Any:
        return acted(f"{kind}-all", lambda click: handle_all(services, click, kind))

    def on_submit(choice: Choice) -> Any:
        async def listener(ack: AsyncAck, body: dict[str, Any]) -> None:
            submission = _parsed(ViewSubmission, body, "a submission")
            if submission is None:
                await ack()
                return
            result = await submitted(services, submission, choice)
            if result.errors:
                await ack(response_action="errors", errors=result.errors)
                return
            await ack()
            services.runner.submit(
                finish_submission(services, result), name=f"{choice}-modal-{submission.user.id}"
            )

        listener.__name__ = f"on_{choice}_submit"
        return listener

    app.assistant(create_assistant(services))  # before the message listener: assistant events
    app.event("app_home_opened")(on_home_opened)
    app.event("app_context_changed")(on_context_changed)
    app.event("app_mention")(on_event)
    app.event("message")(on_event)
    app.event("subteam_members_changed")(on_subteam)
    app.event("subteam_updated")(on_subteam)
    app.action(APPROVE_ACTION)(on_click("approve"))
    app.action(DECLINE_ACTION)(on_click("decline"))
    app.action(EDIT_ACTION)(on_click("edit"))
    app.action(WITHDRAW_ACTION)(on_click("withdraw"))
    app.action(PROVIDE_ACTION)(on_click("provide"))
    app.action(SHOW_ALL_ACTION)(on_show_all)
    app.action(ASK_AGAIN_ACTION)(acted("ask-again", lambda click: ask_again(services, click)))
    app.action(EXTEND_ACTION)(acted("extend", lambda click: extend_card(services, click)))
    app.action(ROW_ACTION)(acted("row", row, "a row menu choice"))
    app.action(APPROVE_ALL_ACTION)(on_all("approve"))
    app.action(DECLINE_ALL_ACTION)(on_all("decline"))
    app.view(DECLINE_VIEW)(on_submit("decline"))
    app.view(EDIT_VIEW)(on_submit("edit"))
    app.view(PROVIDE_VIEW)(on_submit("provide"))


async def say_unavailable(services: Services, event: MessageEvent, service: Service) -> None:
    """Tell the person in the thread that a service the bot needs is down (SPEC 13): the
    event is refused (503) for Slack to deliver again, and nothing else would show."""
    try:
        await services.client.chat_postMessage(
            channel=event.channel, thread_ts=event.root_ts, text=msg.UNAVAILABLE[service]
        )
    except SlackApiError as exc:
        logger.info("could not tell %s that %s is down: %s", event.channel, service, exc)


def asker(click: BlockActions) -> Asker:
    """Who clicked and where they are told (the Home tab when the click has no channel)."""
    return Asker(user=click.user.id, channel=click.channel_id, thread_ts=click.thread_ts)


def _parsed(model: type[M], body: dict[str, Any], what: str) -> M | None:
    """``body`` as ``model``; None, logged with the fields that failed (never their values),
    when it does not parse."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        failed = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:5])
        logger.warning("ignoring %s that does not parse: %s", what, failed)
        return None
