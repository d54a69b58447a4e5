"""The bolt listeners of standing grants (SPEC 15): "Approve and allow…", its modal's Submit,
and Revoke. Each acks, parses its payload, and hands the work to the runner."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError
from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.slack._ids import GRANT_ACTION, GRANT_VIEW, REVOKE_GRANT_ACTION
from bot.slack._services import Services
from bot.slack.deciding._grants import grant_submitted, open_grant_modal, revoke_clicked
from bot.slack.deciding._modals import finish_submission
from bot.slack.deciding._unrecorded import or_not_recorded
from bot.slack.delivery.home._listing import card_click
from bot.slack.receiving._listeners import asker
from bot.slack.receiving._payloads import BlockActions, ViewSubmission

logger = logging.getLogger(__name__)


def register_grant_listeners(app: AsyncApp, services: Services) -> None:
    """Attach the grant listeners to ``app``."""

    async def on_grant(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        click = _click(body)
        if click is None:
            return

        async def work() -> None:
            on_card = click
            if click.channel_id is None:  # from the Home tab: the card in its thread
                found = await card_click(services, click)
                if found is None:
                    return
                on_card = found
            await open_grant_modal(services, on_card)

        services.runner.submit(
            or_not_recorded(services, asker(click), work()), name=f"grant-{click.user.id}"
        )

    async def on_revoke(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        click = _click(body)
        if click is not None:
            services.runner.submit(revoke_clicked(services, click), name="revoke-grant")

    async def on_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        try:
            submission = ViewSubmission.model_validate(body)
        except ValidationError:
            logger.warning("ignoring a grant submission that does not parse")
            await ack()
            return
        result = await grant_submitted(services, submission)
        await ack()
        services.runner.submit(
            finish_submission(services, result), name=f"grant-modal-{submission.user.id}"
        )

    app.action(GRANT_ACTION)(on_grant)
    app.action(REVOKE_GRANT_ACTION)(on_revoke)
    app.view(GRANT_VIEW)(on_submit)


def _click(body: dict[str, Any]) -> BlockActions | None:
    try:
        return BlockActions.model_validate(body)
    except ValidationError:
        logger.warning("ignoring a grant click that does not parse")
        return None
