"""Pydantic models of the Slack payloads the listeners read (parsed at the top of each one)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

HANDLED_SUBTYPES = (None, "thread_broadcast", "file_share")
"""Message subtypes that are a person writing; edits, joins, bot messages … are ignored."""


class _Slack(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class MessageEvent(_Slack):
    """An ``app_mention`` or ``message`` event."""

    type: str
    subtype: str | None = None
    user: str | None = None
    bot_id: str | None = None
    text: str = ""
    ts: str
    thread_ts: str | None = None
    channel: str
    channel_type: str | None = None
    team: str | None = None

    @property
    def root_ts(self) -> str:
        """The ``ts`` of the thread this message belongs to (itself when top-level)."""
        return self.thread_ts or self.ts

    @property
    def is_thread_reply(self) -> bool:
        """True when the message is a reply inside an existing thread."""
        return self.thread_ts is not None and self.thread_ts != self.ts

    @property
    def is_addressed(self) -> bool:
        """A mention of the bot or a direct message: the person waits for an answer."""
        return self.type == "app_mention" or self.channel_type == "im"

    @property
    def thread_key(self) -> str:
        """``<channel>:<thread ts>``: the Slack thread of this message."""
        return f"{self.channel}:{self.root_ts}"

    @property
    def is_from_person(self) -> bool:
        """A person's own message: no bot, no edit or other subtype."""
        return self.bot_id is None and self.user is not None and self.subtype in HANDLED_SUBTYPES


class HomeOpened(_Slack):
    """An ``app_home_opened`` event (``tab`` is ``home`` or ``messages``)."""

    type: str
    user: str
    tab: str = "home"
    channel: str | None = None
    """The person's direct messages with the app (where the Messages tab's conversations are)."""


class _Entity(_Slack):
    type: str = ""
    value: str = ""


class _AppContext(_Slack):
    entities: list[_Entity] = []


class AppContextChanged(_Slack):
    """An ``app_context_changed`` event (agent view): what the person looks at now, most
    relevant first (``context`` is empty when nothing is in view)."""

    type: str
    context: _AppContext = _AppContext()


class AppContextEnvelope(_Slack):
    """The ``event_callback`` body around ``app_context_changed``."""

    event: AppContextChanged


class _Subteam(_Slack):
    id: str


class SubteamEvent(_Slack):
    """A ``subteam_members_changed`` (``subteam_id``) or ``subteam_updated`` (``subteam.id``)."""

    type: str
    subteam_id: str | None = None
    subteam: _Subteam | None = None

    @property
    def group(self) -> str | None:
        """The user group that changed (None: the event does not say)."""
        return self.subteam_id or (self.subteam.id if self.subteam else None)


class SubteamEnvelope(_Slack):
    """The ``event_callback`` body around a user-group event."""

    event: SubteamEvent


class HomeEnvelope(_Slack):
    """The ``event_callback`` body around ``app_home_opened``."""

    event_id: str | None = None
    event: HomeOpened


class EventEnvelope(_Slack):
    """The ``event_callback`` body around an event."""

    event_id: str | None = None
    team_id: str | None = None
    event: MessageEvent


class _User(_Slack):
    id: str
    team_id: str | None = None


class _Team(_Slack):
    id: str


class _Container(_Slack):
    channel_id: str | None = None
    message_ts: str | None = None
    thread_ts: str | None = None


class _Channel(_Slack):
    id: str


class _Message(_Slack):
    ts: str
    thread_ts: str | None = None


class _Selected(_Slack):
    value: str | None = None


class _Action(_Slack):
    action_id: str
    value: str | None = None
    selected_option: _Selected | None = None
    """The option chosen in an overflow menu (a batch card row's ⋯)."""

    @property
    def chosen(self) -> str | None:
        """The button's value, or the chosen option's."""
        if self.selected_option is not None:
            return self.selected_option.value
        return self.value


class BlockActions(_Slack):
    """A ``block_actions`` interaction: a button click."""

    user: _User
    team: _Team | None = None
    trigger_id: str | None = None
    container: _Container = _Container()
    channel: _Channel | None = None
    message: _Message | None = None
    actions: list[_Action]

    @property
    def channel_id(self) -> str | None:
        """Where the clicked message is."""
        return self.container.channel_id or (self.channel.id if self.channel else None)

    @property
    def message_ts(self) -> str | None:
        """The clicked message."""
        return self.container.message_ts or (self.message.ts if self.message else None)

    @property
    def thread_ts(self) -> str | None:
        """The thread of the clicked message (itself when top-level)."""
        if self.message and self.message.thread_ts:
            return self.message.thread_ts
        return self.container.thread_ts or self.message_ts

    @property
    def team_id(self) -> str | None:
        """The workspace the click came from."""
        return self.team.id if self.team else self.user.team_id

    def as_button(self, action_id: str, value: str) -> BlockActions:
        """This click as if on the button ``action_id`` carrying ``value`` (a row's menu choice
        goes the way of the call's own button)."""
        return self.model_copy(update={"actions": [_Action(action_id=action_id, value=value)]})

    def on_message(self, *, channel: str, ts: str, thread_ts: str) -> BlockActions:
        """This click as if made on message ``ts`` (a click from the Home tab has none)."""
        container = _Container(channel_id=channel, message_ts=ts, thread_ts=thread_ts)
        return self.model_copy(update={"container": container, "channel": None, "message": None})


class _View(_Slack):
    id: str | None = None
    callback_id: str
    private_metadata: str = ""
    state: dict[str, dict[str, dict[str, Any]]] = {}


class ViewSubmission(_Slack):
    """A ``view_submission`` interaction: a modal's Submit."""

    user: _User
    team: _Team | None = None
    view: _View

    @property
    def values(self) -> dict[str, dict[str, Any]]:
        """``view.state.values``: block id → action id → element state."""
        return self.view.state.get("values", {})
