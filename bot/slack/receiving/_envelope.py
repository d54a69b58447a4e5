"""The shape of a body Slack sends, checked before bolt reads it (SPEC 6: a signed malformed
body gets 400, never a traceback).

bolt's own middleware (authorization, self-event filtering, listener matching) reads nested
fields of every body (``event.user``, ``team.id``, ``authorizations[0].team_id``,
``actions[0].action_id`` …) and raises on a field of the wrong type: a signed
``{"type": "event_callback", "event": "str"}`` was an HTTP 500 with an ERROR traceback. This
module types exactly the fields bolt and our listeners read, leaves every other field free, and
says whether a parsed body has that shape. Slack's own bodies always have it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator


class _Open(BaseModel):
    """A Slack object: the fields named are typed, any other field is free."""

    model_config = ConfigDict(extra="allow")


class _Named(_Open):
    """``team``, ``user``, ``channel``, ``enterprise`` given as an object."""

    id: str | None = None
    team_id: str | None = None
    enterprise_id: str | None = None
    name: str | None = None


_Ref = str | _Named | None
"""A reference Slack gives either as an id or as an object with an ``id``."""


class _Authorization(_Open):
    team_id: str | None = None
    enterprise_id: str | None = None
    user_id: str | None = None
    is_enterprise_install: bool | str | None = None
    is_bot: bool | None = None


class _Inner(_Open):
    """An event, or a message / item / assistant thread inside one."""

    type: str | None = None
    subtype: str | None = None
    user: _Ref = None
    user_id: str | None = None
    user_team: str | None = None
    team: _Ref = None
    team_id: str | None = None
    enterprise: _Ref = None
    enterprise_id: str | None = None
    channel: _Ref = None
    channel_id: str | None = None
    channel_type: str | None = None
    thread_ts: str | None = None
    ts: str | None = None
    event_ts: str | None = None
    text: str | None = None
    bot_id: str | None = None
    tab: str | None = None
    function_execution_id: str | None = None
    bot_access_token: str | None = None
    inputs: dict[str, Any] | None = None
    blocks: list[dict[str, Any]] | None = None
    message: _Inner | None = None
    previous_message: _Inner | None = None
    item: _Inner | None = None
    assistant_thread: _Inner | None = None


class _View(_Open):
    type: str
    id: str | None = None
    team_id: str | None = None
    app_installed_team_id: str | None = None
    callback_id: str | None = None
    private_metadata: str | None = None
    hash: str | None = None
    state: dict[str, dict[str, dict[str, dict[str, Any]]]] | None = None


class _Selected(_Open):
    value: str | None = None


class _Action(_Open):
    action_id: str
    block_id: str | None = None
    type: str | None = None
    value: str | None = None
    action_ts: str | None = None
    selected_option: _Selected | None = None


class _ResponseUrl(_Open):
    response_url: str | None = None


_INTERACTIONS = frozenset(
    {
        "block_actions",
        "block_suggestion",
        "view_submission",
        "view_closed",
        "shortcut",
        "message_action",
    }
)
"""Interaction payloads: each names the person who acted as an object (``user.id``)."""


class SlackEnvelope(_Open):
    """Every body Slack posts to ``/slack/events``: an Events API delivery, an interaction
    payload, a slash command or an SSL check."""

    type: str | None = None
    command: str | None = None
    ssl_check: str | None = None
    token: str | None = None
    challenge: str | None = None
    api_app_id: str | None = None
    team_id: str | None = None
    enterprise_id: str | None = None
    user_id: str | None = None
    channel_id: str | None = None
    trigger_id: str | None = None
    response_url: str | None = None
    event_id: str | None = None
    event_time: int | None = None
    thread_ts: str | None = None
    team: _Ref = None
    enterprise: _Ref = None
    user: _Ref = None
    channel: _Ref = None
    is_enterprise_install: bool | str | None = None
    is_ext_shared_channel: bool | None = None
    authorizations: list[_Authorization] | None = None
    event: _Inner | None = None
    message: _Inner | None = None
    previous_message: _Inner | None = None
    container: dict[str, Any] | None = None
    view: _View | None = None
    actions: list[_Action] | None = None
    response_urls: list[_ResponseUrl] | None = None
    function_data: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _kind_has_its_parts(self) -> SlackEnvelope:
        if self.type is None and self.command is None and self.ssl_check is None:
            raise ValueError("no type, command or ssl_check")
        needs = {
            "event_callback": self.event,
            "url_verification": self.challenge,
            "block_actions": self.actions,
            "view_submission": self.view,
            "view_closed": self.view,
        }
        if self.type in needs and not needs[self.type]:
            raise ValueError(f"a {self.type} body without its part")
        if self.type in _INTERACTIONS and not (isinstance(self.user, _Named) and self.user.id):
            raise ValueError(f"a {self.type} payload without the user who acted")
        return self


def is_slack_shaped(body: object) -> bool:
    """True when ``body`` (as bolt parsed it) has the shape of something Slack sends."""
    if not isinstance(body, dict):
        return False
    try:
        SlackEnvelope.model_validate(body)
    except ValidationError:
        return False
    return True
