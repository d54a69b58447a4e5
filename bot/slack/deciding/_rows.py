"""A batch card row's ⋯ menu: the option chosen, taken as a click on that call's own button.

The option names the call (run, call id, the start of the fingerprint the row showed); the
call's card record gives what the row showed in full (its ``ApprovalRef``), so the choice goes
down the path of a card's own button: approve, approve and allow, edit or decline (their
modals), show all, withdraw (refused to anyone but the requester, by the runtime). A menu whose
row changed since it was drawn (the call was presented anew, or its card is another message)
is refused with an ephemeral note: nothing is decided.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from bot.slack._ids import (
    APPROVE_ACTION,
    DECLINE_ACTION,
    EDIT_ACTION,
    GRANT_ACTION,
    SHOW_ALL_ACTION,
    WITHDRAW_ACTION,
)
from bot.slack._services import Services
from bot.slack.blocks._batch_card import RowChoice, RowKind
from bot.slack.receiving._payloads import BlockActions

logger = logging.getLogger(__name__)

BUTTONS: dict[RowKind, str] = {
    "approve": APPROVE_ACTION,
    "grant": GRANT_ACTION,
    "edit": EDIT_ACTION,
    "decline": DECLINE_ACTION,
    "show-all": SHOW_ALL_ACTION,
    "withdraw": WITHDRAW_ACTION,
}
"""The button of a card of its own that each menu option stands for."""


async def row_chosen(
    services: Services, click: BlockActions
) -> tuple[RowKind, BlockActions] | None:
    """The menu's choice and the click as on that call's own button; None (the user told why,
    when it is stale) when there is nothing to do."""
    choice = RowChoice.decode(click.actions[0].chosen if click.actions else None)
    if choice is None:
        logger.warning("ignoring a row menu choice that is not one of ours")
        return None
    card = await services.cards.find(choice.run_id, choice.tool_call_id)
    ref = None if card is None else card.view.ref
    if (
        card is None
        or ref is None
        or card.ts != click.message_ts
        or not ref.fingerprint.startswith(choice.fingerprint)
    ):
        await _stale(services, click)
        return None
    return choice.kind, click.as_button(BUTTONS[choice.kind], ref.encode())


async def _stale(services: Services, click: BlockActions) -> None:
    if click.channel_id is None:
        return
    try:
        await services.client.chat_postEphemeral(
            channel=click.channel_id,
            user=click.user.id,
            text=msg.ROW_STALE,
            thread_ts=click.thread_ts,
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s: %s", click.user.id, exc.response.get("error"))
