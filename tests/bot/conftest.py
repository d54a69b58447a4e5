"""Fixtures of the Slack tests: a fake Slack, storage, a scripted agent served by the bot."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import pytest

from agents.models import ScriptedModel, ScriptItem
from storage import InMemoryStorage, Storage
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI(bot_user_id="UBOT") as fake:
        yield fake


@pytest.fixture
async def store() -> AsyncIterator[Storage]:
    storage = InMemoryStorage()
    yield storage
    await storage.close()


@pytest.fixture
def executions() -> Executions:
    return Executions()


BotFactory = Callable[[list[ScriptItem]], AbstractAsyncContextManager[tuple[Bot, ScriptedModel]]]


@pytest.fixture
def bot_with(slack: FakeSlackAPI, store: Storage, executions: Executions) -> BotFactory:
    """``async with bot_with([reply("Hi")]) as (bot, model):`` serves a scripted agent."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def factory(script: list[ScriptItem]) -> AsyncIterator[tuple[Bot, ScriptedModel]]:
        agent, model = make_agent(script, executions)
        async with start_bot(slack, agent, store) as bot:
            yield bot, model

    return factory
