"""Signature checking stays on: forged or stale requests get 401 and start nothing."""

from __future__ import annotations

import io
import logging
import time
from typing import Any

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from agents.models import call, reply
from bot import APPROVE_ACTION
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, SECRET, TEAM, Executions
from tests.fakes.slack_signing import event_request, signed_headers


def _mention(ts: str) -> dict[str, str]:
    return {
        "type": "app_mention",
        "user": "U1",
        "text": "<@UBOT> hi",
        "ts": ts,
        "channel": CHANNEL,
        "team": TEAM,
    }


async def test_forged_event_gets_401_and_nothing_runs(bot_with: BotFactory) -> None:
    async with bot_with([reply("never")]) as (bot, model):
        response = await bot.send_event(_mention("1.000001"), secret="not-the-secret")
        assert response.status == 401
        await bot.settle()
        assert model.requests == []
        assert bot.slack.calls_to("chat.postMessage") == []


async def test_stale_event_gets_401_and_nothing_runs(bot_with: BotFactory) -> None:
    async with bot_with([reply("never")]) as (bot, model):
        response = await bot.send_event(_mention("1.000002"), timestamp=int(time.time()) - 600)
        assert response.status == 401
        await bot.settle()
        assert model.requests == []


async def test_forged_and_stale_clicks_get_401_and_run_nothing(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with([call("delete_record", {"id": "a"}), reply("done")]) as (bot, _):
        ts = await bot.mention("delete a")
        await bot.settle()
        [card] = bot.cards(ts)
        forged = await bot.click(card, APPROVE_ACTION, secret="forged")
        stale = await bot.click(card, APPROVE_ACTION, timestamp=int(time.time()) - 301)
        assert (forged.status, stale.status) == (401, 401)
        await bot.settle()
        assert executions.of("delete_record") == []
        assert bot.slack.calls_to("chat.update") == []


async def test_rejected_request_body_is_not_logged(bot_with: BotFactory, caplog) -> None:
    caplog.set_level("DEBUG")
    async with bot_with([]) as (bot, _):
        await bot.send_event(_mention("1.000003") | {"text": "SECRET-PAYLOAD"}, secret="x")
    assert "SECRET-PAYLOAD" not in caplog.text


def _loud(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the request path logged at WARNING or above, or with a traceback."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith(("bot", "slack", "aiohttp"))
        and (r.levelno >= logging.WARNING or r.exc_info)
    ]


_GARBAGE: list[tuple[str, bytes]] = [
    ("application/json", b"{not json"),
    ("application/json", b"[1, 2, 3]"),
    ("application/json", b""),
    ("application/x-www-form-urlencoded", b"payload=%7Bbroken"),
    ("application/x-www-form-urlencoded", b"payload=%5B%5D"),
    ("text/plain", b"\xff\xfe\x00 binary"),
    ("application/json", b'{"type": "event_callback", "event": 5}'),
]


@pytest.mark.parametrize(("content_type", "body"), _GARBAGE)
async def test_an_unsigned_request_gets_401_whatever_its_body_and_logs_no_traceback(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture, content_type: str, body: bytes
) -> None:
    caplog.set_level("DEBUG")
    async with bot_with([]) as (bot, model):
        response = await bot.http.post(
            "/slack/events", data=body, headers={"Content-Type": content_type}
        )
        assert response.status == 401
        badly = await bot.http.post(
            "/slack/events",
            data=body,
            headers={
                "Content-Type": content_type,
                "X-Slack-Request-Timestamp": "not-a-number",
                "X-Slack-Signature": "v0=deadbeef",
            },
        )
        assert badly.status == 401
        await bot.settle()
        assert model.requests == []
    assert _loud(caplog) == []


@pytest.mark.parametrize(("content_type", "body"), _GARBAGE[:5])
async def test_a_signed_malformed_request_gets_400_and_logs_no_traceback(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture, content_type: str, body: bytes
) -> None:
    caplog.set_level("DEBUG")
    async with bot_with([]) as (bot, model):
        headers = {"Content-Type": content_type, **signed_headers(body.decode(), SECRET)}
        response = await bot.http.post("/slack/events", data=body, headers=headers)
        assert response.status == 400
        await bot.settle()
        assert model.requests == []
    assert _loud(caplog) == []


async def test_an_unsigned_10_mb_body_is_refused_with_401_before_it_is_read(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture
) -> None:
    async with bot_with([]) as (bot, _):
        huge = io.BytesIO(b"x" * (10 * 1024 * 1024))
        response = await bot.http.post(
            "/slack/events", data=huge, headers={"Content-Type": "application/json"}
        )
        assert response.status == 401
    assert _loud(caplog) == []


@pytest.mark.parametrize(
    "body",
    [
        "token=x&team_id=T1",  # a form without its payload
        'payload={"type": "block_actions"',  # a payload that is not JSON
    ],
)
async def test_a_signed_form_that_slack_would_never_send_gets_400(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture, body: str
) -> None:
    async with bot_with([]) as (bot, model):
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            **signed_headers(body, SECRET),
        }
        response = await bot.http.post("/slack/events", data=body, headers=headers)
        assert response.status == 400
        await bot.settle()
        assert model.requests == []
    assert _loud(caplog) == []


async def test_the_signature_of_a_request_is_verified_once(
    bot_with: BotFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[str] = []
    verify = SignatureVerifier.is_valid

    def counted(self: SignatureVerifier, body: Any, timestamp: Any, signature: Any) -> bool:
        checks.append(str(timestamp))
        return verify(self, body, timestamp, signature)

    monkeypatch.setattr(SignatureVerifier, "is_valid", counted)
    async with bot_with([reply("hi")]) as (bot, _):
        response = await bot.send_event(_mention("1.000009"))
        assert response.status == 200
        assert len(checks) == 1  # ours, over the raw body; bolt's is off
        forged = await bot.send_event(_mention("1.000010"), secret="forged")
        assert forged.status == 401
        await bot.settle()


async def test_a_forged_request_given_to_the_bolt_app_directly_is_still_refused(
    bot_with: BotFactory,
) -> None:
    from bot import create_bolt_app

    async with bot_with([reply("never")]) as (bot, model):
        bolt = create_bolt_app(bot.services, signing_secret=SECRET)
        envelope = {"type": "event_callback", "team_id": TEAM, "event": _mention("1.000011")}
        body, headers = event_request(envelope, "forged")
        response = await bolt.async_dispatch(AsyncBoltRequest(body=body, headers=headers))
        assert response.status == 401
        await bot.settle()
        assert model.requests == []
