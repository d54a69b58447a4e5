"""A signed body that is not Slack's shape gets 400 and no traceback, whatever is wrong inside it.

Property-based: hypothesis takes bodies Slack really sends (a mention, a DM, a Home tab open, a
button click, a modal submit, the URL check), puts a value of a random JSON type at a random
place inside them (nested fields included), signs the result exactly as Slack signs, and posts
it as an event (JSON) or as an interaction (``payload=`` form). The server must never answer 500
and never log a traceback or an error (a body still valid after the change is served as usual).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.models import reply
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, SECRET, TEAM
from tests.fakes.slack_signing import event_request, interaction_request, signed_headers

_EVENT = {
    "type": "event_callback",
    "token": "legacy",
    "team_id": TEAM,
    "api_app_id": "A1",
    "event_id": "Ev1",
    "event_time": 1690000000,
    "authorizations": [{"team_id": TEAM, "user_id": "UBOT", "is_bot": True}],
    "event": {
        "type": "app_mention",
        "user": "U1",
        "text": "<@UBOT> hi",
        "ts": "1690000000.000001",
        "channel": CHANNEL,
        "team": TEAM,
        "event_ts": "1690000000.000001",
    },
}
_DM = {
    **_EVENT,
    "event": {
        "type": "message",
        "channel_type": "im",
        "user": "U1",
        "text": "hi",
        "ts": "1690000000.000002",
        "channel": "D1",
        "thread_ts": "1690000000.000001",
    },
}
_HOME = {**_EVENT, "event": {"type": "app_home_opened", "user": "U1", "tab": "home"}}
_URL_CHECK = {"type": "url_verification", "token": "legacy", "challenge": "c"}
_CLICK = {
    "type": "block_actions",
    "user": {"id": "U2", "username": "u2", "team_id": TEAM},
    "api_app_id": "A1",
    "team": {"id": TEAM, "domain": "test"},
    "trigger_id": "trigger-1",
    "container": {"type": "message", "message_ts": "1.2", "channel_id": CHANNEL},
    "channel": {"id": CHANNEL, "name": "ops"},
    "message": {"type": "message", "ts": "1.2", "thread_ts": "1.1", "text": "card"},
    "response_url": "http://127.0.0.1:9/unused",
    "actions": [
        {
            "type": "button",
            "action_id": "approval:approve",
            "block_id": "b",
            "value": '{"r":"run","c":"call"}',
            "action_ts": "1.3",
        }
    ],
}
_SUBMIT = {
    "type": "view_submission",
    "user": {"id": "U2", "team_id": TEAM},
    "team": {"id": TEAM},
    "view": {
        "type": "modal",
        "id": "V1",
        "callback_id": "approval:decline",
        "private_metadata": '{"r":"run","c":"call"}',
        "state": {"values": {"reason": {"reason": {"type": "plain_text_input", "value": "no"}}}},
    },
}
_EVENTS = [_EVENT, _DM, _HOME, _URL_CHECK]
_INTERACTIONS = [_CLICK, _SUBMIT]

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` a field can be replaced (dict keys, list items)."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*path, index))
    return found


@st.composite
def _broken(draw: st.DrawFn, bases: list[dict[str, Any]]) -> dict[str, Any]:
    body = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(_places(body)))
        parent = body
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = draw(_JSON)
    return body


def _loud(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith(("bot", "slack", "aiohttp", "agents"))
        and (r.levelno >= logging.ERROR or r.exc_info)
    ]


@pytest.mark.parametrize(
    ("bases", "sign"),
    [(_EVENTS, event_request), (_INTERACTIONS, interaction_request)],
    ids=["events", "interactions"],
)
async def test_signed_bodies_with_a_wrong_field_anywhere_never_get_500_nor_a_traceback(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture, bases: list[dict[str, Any]], sign: Any
) -> None:
    caplog.set_level("DEBUG")
    statuses: set[int] = set()
    async with bot_with([reply("ok")] * 400) as (bot, _):
        loop = asyncio.get_running_loop()

        async def post(body: dict[str, Any]) -> int:
            data, headers = sign(body, SECRET)
            async with bot.http.post("/slack/events", data=data, headers=headers) as response:
                await response.read()
                return response.status

        @settings(
            max_examples=300,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(_broken(bases))
        def each(body: dict[str, Any]) -> None:
            status = asyncio.run_coroutine_threadsafe(post(body), loop).result(timeout=30)
            statuses.add(status)
            assert status < 500, json.dumps(body)

        await asyncio.to_thread(each)
        await bot.settle()
    assert 400 in statuses  # the fuzz did reach broken shapes
    assert _loud(caplog) == []


@pytest.mark.parametrize(
    "body",
    [
        {"type": "event_callback", "event": "str"},
        {"type": "event_callback", "event": {"type": "app_mention", "user": ["U1"]}},
        {**_EVENT, "authorizations": [5]},
        {**_EVENT, "team_id": 7},
    ],
)
async def test_the_reported_bodies_get_400_and_no_traceback(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture, body: dict[str, Any]
) -> None:
    async with bot_with([]) as (bot, model):
        response = await bot.send_raw(body)
        assert response.status == 400
        await bot.settle()
        assert model.requests == []
    assert _loud(caplog) == []


def _nested_json(base: dict[str, Any], depth: int) -> str:
    """``base`` as JSON with an ``extra`` field nesting ``depth`` lists (too deep for
    ``json.dumps`` itself, so written out)."""
    return json.dumps(base)[:-1] + ', "extra": ' + "[" * depth + '"x"' + "]" * depth + "}"


@pytest.mark.parametrize("base", [_EVENT, _CLICK], ids=["event", "interaction"])
async def test_a_signed_body_nesting_5000_deep_gets_400_before_it_is_parsed(
    bot_with: BotFactory, caplog: pytest.LogCaptureFixture, base: dict[str, Any]
) -> None:
    text = _nested_json(base, 5000)
    if base is _CLICK:
        body, kind = "payload=" + quote(text), "application/x-www-form-urlencoded"
    else:
        body, kind = text, "application/json"
    headers = {"Content-Type": kind, **signed_headers(body, SECRET)}
    async with bot_with([]) as (bot, model):
        async with bot.http.post("/slack/events", data=body, headers=headers) as response:
            assert response.status == 400
        await bot.settle()
        assert model.requests == []
    assert _loud(caplog) == []


async def test_a_body_nesting_as_deep_as_slacks_own_is_served(bot_with: BotFactory) -> None:
    body = json.loads(_nested_json(_EVENT, 40))
    async with bot_with([reply("ok")]) as (bot, _):
        response = await bot.send_raw(body)
        assert response.status == 200
        await bot.settle()
