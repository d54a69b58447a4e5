"""``ApprovalRef``: what a card's button carries back to the bot (an opaque, compact JSON).

Only ids travel in the button ``value``; everything else stays server-side.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, ValidationError

VALUE_LIMIT = 2000
"""Slack's limit on a button ``value``."""


class ApprovalRef(BaseModel):
    """Which pending call a button decides, and the arguments it was shown with."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    run_id: str = Field(alias="r")
    """The run to decide (the outermost run for sub-agent calls)."""
    tool_call_id: str = Field(alias="c")
    """The call to decide."""
    fingerprint: str = Field(alias="f")
    """``agents.fingerprint(tool_name, args)`` of what the card showed."""
    definition_digest: str | None = Field(default=None, alias="d")
    """``definition_digest`` of the tool the card showed (an approval must match it)."""

    def encode(self) -> str:
        """The button value; raises ``ValueError`` when it would exceed Slack's 2000 chars."""
        value = json.dumps(self.model_dump(by_alias=True, exclude_none=True), separators=(",", ":"))
        if len(value) > VALUE_LIMIT:
            raise ValueError(f"approval reference is {len(value)} chars, over {VALUE_LIMIT}")
        return value

    @classmethod
    def decode(cls, value: str | None) -> ApprovalRef | None:
        """Parse a button value; None when it is not one of ours."""
        if not value:
            return None
        try:
            return cls.model_validate_json(value)
        except ValidationError:
            return None


class ModalRef(BaseModel):
    """A modal's ``private_metadata``: the call it decides and the card or question it came from."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    ref: ApprovalRef = Field(alias="a")
    """The pending call."""
    team: str = Field(alias="t")
    """The workspace of the thread."""
    channel: str = Field(alias="ch")
    """Channel of the card or question."""
    message_ts: str | None = Field(default=None, alias="m")
    """The card or question message."""
    thread_ts: str = Field(alias="th")
    """The Slack thread."""

    def encode(self) -> str:
        """Compact JSON, well under Slack's 3000-character ``private_metadata``."""
        return json.dumps(self.model_dump(by_alias=True), separators=(",", ":"))

    @classmethod
    def decode(cls, value: str | None) -> ModalRef | None:
        """Parse ``private_metadata``; None when it is not one of ours."""
        if not value:
            return None
        try:
            return cls.model_validate_json(value)
        except ValidationError:
            return None
