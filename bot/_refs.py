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

    def encode(self) -> str:
        """The button value; raises ``ValueError`` when it would exceed Slack's 2000 chars."""
        value = json.dumps(self.model_dump(by_alias=True), separators=(",", ":"))
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
