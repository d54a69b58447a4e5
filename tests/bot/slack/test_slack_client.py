"""The Web API client: streaming throttle, 429 and connection-error retries, SLACK_API_URL."""

from __future__ import annotations

import asyncio

from bot.slack.delivery._streamer import ReplyStreamer
from bot.slack.delivery._webclient import create_web_client
from tests.fakes.slack_api import FakeSlackAPI


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_streamed_reply_is_updated_at_most_once_per_interval() -> None:
    async with FakeSlackAPI() as slack:
        clock = Clock()
        client = create_web_client("xoxb-t", api_url=slack.base_url)
        streamer = ReplyStreamer(client, channel="C1", thread_ts="1.0", clock=clock)
        await streamer.append("Hello")
        for word in (" there", ",", " how", " are"):
            clock.now += 0.2
            await streamer.append(word)
        assert [c.method for c in slack.calls] == ["chat.postMessage"]
        clock.now += 0.3
        await streamer.append(" you")
        assert [c.method for c in slack.calls] == ["chat.postMessage", "chat.update"]
        await streamer.append("?")
        await streamer.finish()
        [message] = slack.messages.values()
        assert message.text == "Hello there, how are you?"
        assert message.thread_ts == "1.0"
        assert len(slack.calls) == 3


async def test_rate_limited_call_is_retried_after_retry_after() -> None:
    async with FakeSlackAPI() as slack:
        client = create_web_client("xoxb-t", api_url=slack.base_url)
        slack.fail_next("chat.postMessage", status=429, error="ratelimited", retry_after=0)
        response = await client.chat_postMessage(channel="C1", text="hi")
        assert response["ok"] is True
        assert len(slack.calls_to("chat.postMessage")) == 2


async def test_connection_errors_are_retried() -> None:
    async with FakeSlackAPI() as slack:
        client = create_web_client("xoxb-t", api_url=slack.base_url)
        slack.disconnect_next("chat.update")
        await client.chat_postMessage(channel="C1", text="hi")
        response = await client.chat_update(channel="C1", ts="1700000000.000001", text="hey")
        assert response["ok"] is True
        assert len(slack.calls_to("chat.update")) == 2


async def test_slack_api_url_points_the_client_elsewhere() -> None:
    async with FakeSlackAPI() as slack:
        client = create_web_client("xoxb-t", api_url=slack.base_url)
        auth = await client.auth_test()
        assert auth["user_id"] == "UBOT"
        assert slack.calls_to("auth.test")[0].token == "xoxb-t"


async def test_text_held_back_by_the_throttle_is_written_when_the_interval_passes() -> None:
    async with FakeSlackAPI() as slack:
        clock = Clock()
        wake = asyncio.Event()
        slept: list[float] = []

        async def sleep(seconds: float) -> None:
            slept.append(seconds)
            await wake.wait()

        client = create_web_client("xoxb-t", api_url=slack.base_url)
        streamer = ReplyStreamer(client, channel="C1", thread_ts="1.0", clock=clock, sleep=sleep)
        await streamer.append("Checking")
        clock.now += 0.25
        await streamer.append(" the logs…")
        await streamer.append(" still")
        await asyncio.sleep(0)
        assert slept == [0.75]
        assert [c.method for c in slack.calls] == ["chat.postMessage"]
        timer = streamer._timer
        assert timer is not None
        clock.now += 0.75
        wake.set()
        await timer
        [update] = slack.calls_to("chat.update")
        assert update["text"] == "Checking the logs… still"
        await streamer.finish()
        assert len(slack.calls) == 2
