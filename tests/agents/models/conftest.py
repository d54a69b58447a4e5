"""Fixtures for the model adapter tests: the fake OpenAI server and a real client pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from openai import AsyncOpenAI

from tests.fakes.openai_server import FakeOpenAIServer

MAX_RETRIES = 2


@pytest.fixture
async def openai_server() -> AsyncIterator[FakeOpenAIServer]:
    """A started fake OpenAI server (127.0.0.1, ephemeral port), closed after the test."""
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def openai_client(openai_server: FakeOpenAIServer) -> AsyncIterator[AsyncOpenAI]:
    """The REAL ``AsyncOpenAI`` client, talking to ``openai_server`` (``max_retries=2``)."""
    async with openai_server.client(max_retries=MAX_RETRIES) as client:
        yield client
