"""Slack's app manifest schema (v1, as of June 2026, with ``features.agent_view``), for the parts
countersign's manifests use: every object refuses keys Slack does not know, with Slack's limits.

Written from Slack's published schema (slackapi/manifest-schema,
``schemas/manifest.schema.1.0.0.json``) and the manifest reference: a manifest that passes here
is one Slack's schema accepts for these parts.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Url = Annotated[str, StringConstraints(pattern=r"^https?://", max_length=3500)]
Name50 = Annotated[str, StringConstraints(max_length=50)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Metadata(_Strict):
    major_version: int | None = None
    minor_version: int | None = None


class DisplayInformation(_Strict):
    name: Annotated[str, StringConstraints(min_length=1, max_length=35)]
    description: Annotated[str, StringConstraints(min_length=1, max_length=140)] | None = None
    background_color: (
        Annotated[str, StringConstraints(pattern=r"^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$")] | None
    ) = None
    long_description: Annotated[str, StringConstraints(min_length=175, max_length=4000)] | None = (
        None
    )


class AppHome(_Strict):
    home_tab_enabled: bool | None = None
    messages_tab_enabled: bool | None = None
    messages_tab_read_only_enabled: bool | None = None


class BotUser(_Strict):
    display_name: Annotated[str, StringConstraints(min_length=1, max_length=80)]
    always_online: bool | None = None


class Prompt(_Strict):
    title: str
    message: str


class AssistantView(_Strict):
    assistant_description: str
    suggested_prompts: list[Prompt] | None = None


class AgentAction(_Strict):
    name: str
    description: str


class AgentView(_Strict):
    agent_description: Annotated[str, StringConstraints(max_length=300)] | None = None
    suggested_prompts: Annotated[list[Prompt], Field(max_length=4)] | None = None
    actions: list[AgentAction] | None = None


class Features(_Strict):
    app_home: AppHome | None = None
    bot_user: BotUser | None = None
    assistant_view: AssistantView | None = None
    agent_view: AgentView | None = None
    shortcuts: list[dict[str, Any]] | None = None
    slash_commands: list[dict[str, Any]] | None = None
    unfurl_domains: list[str] | None = None


class Scopes(_Strict):
    bot: Annotated[list[Name50], Field(max_length=255)] | None = None
    user: Annotated[list[Name50], Field(max_length=255)] | None = None
    bot_optional: Annotated[list[Name50], Field(max_length=255)] | None = None
    user_optional: Annotated[list[Name50], Field(max_length=255)] | None = None


class OAuthConfig(_Strict):
    scopes: Scopes | None = None
    redirect_urls: list[str] | None = None
    token_management_enabled: bool | None = None
    pkce_enabled: bool | None = None


class EventSubscriptions(_Strict):
    request_url: Url | None = None
    bot_events: Annotated[list[Name50], Field(max_length=100)] | None = None
    user_events: Annotated[list[Name50], Field(max_length=100)] | None = None


class Interactivity(_Strict):
    is_enabled: bool
    request_url: Url | None = None
    message_menu_options_url: Url | None = None


class Settings(_Strict):
    event_subscriptions: EventSubscriptions | None = None
    interactivity: Interactivity | None = None
    org_deploy_enabled: bool | None = None
    socket_mode_enabled: bool | None = None
    token_rotation_enabled: bool | None = None
    is_hosted: bool | None = None
    is_mcp_enabled: bool | None = None


class Manifest(_Strict):
    """A Slack app manifest (the parts an HTTP or Socket Mode bot uses)."""

    metadata: Metadata | None = Field(default=None, alias="_metadata")
    display_information: DisplayInformation
    features: Features | None = None
    oauth_config: OAuthConfig | None = None
    settings: Settings | None = None


def validate(manifest: dict[str, Any]) -> Manifest:
    """``manifest`` as Slack's schema reads it; raises ``ValidationError`` otherwise."""
    events = (manifest.get("settings") or {}).get("event_subscriptions") or {}
    for key in ("bot_events", "user_events"):
        listed = events.get(key) or []
        if len(set(listed)) != len(listed):
            raise ValueError(f"{key} lists an event twice (Slack: uniqueItems)")
    return Manifest.model_validate(manifest)
