"""Sign requests exactly as Slack does (``slack_sdk.signature.SignatureVerifier``).

Events are JSON bodies; interactions are ``payload=<urlencoded JSON>`` forms.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

from slack_sdk.signature import SignatureVerifier


def signed_headers(body: str, secret: str, *, timestamp: int | None = None) -> dict[str, str]:
    """``X-Slack-Request-Timestamp`` and ``X-Slack-Signature`` for ``body``."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}


def event_request(
    envelope: dict[str, Any],
    secret: str,
    *,
    timestamp: int | None = None,
    retry_num: int | None = None,
) -> tuple[str, dict[str, str]]:
    """Body and headers of an Events API delivery (``retry_num`` marks a Slack retry)."""
    body = json.dumps(envelope)
    headers = {
        "Content-Type": "application/json",
        **signed_headers(body, secret, timestamp=timestamp),
    }
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return body, headers


def interaction_request(
    payload: dict[str, Any], secret: str, *, timestamp: int | None = None
) -> tuple[str, dict[str, str]]:
    """Body and headers of an interactivity request (a button click, a view submission)."""
    body = "payload=" + quote(json.dumps(payload))
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        **signed_headers(body, secret, timestamp=timestamp),
    }
    return body, headers
