"""Slack payloads of the App Home tab, as Slack sends them (used by ``Bot.click_home``)."""

from __future__ import annotations

import time
from typing import Any

TEAM = "T1"


def home_click_payload(
    view: dict[str, Any], block_id: str, action_id: str, *, user: str = "U2"
) -> dict[str, Any]:
    """The ``block_actions`` payload of a click on the Home tab: a view, no channel/message."""
    block = next(b for b in view["blocks"] if b.get("block_id") == block_id)
    button = next(e for e in block["elements"] if e["action_id"] == action_id)
    action = {"type": "button", "action_id": action_id, "block_id": block_id}
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A1",
        "team": {"id": TEAM, "domain": "test"},
        "trigger_id": "trigger-home",
        "container": {"type": "view", "view_id": "VHOME"},
        "view": {"id": "VHOME", "type": "home", "blocks": view["blocks"]},
        "actions": [{**action, "value": button["value"], "action_ts": str(time.time())}],
    }
