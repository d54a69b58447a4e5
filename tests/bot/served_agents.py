"""Objects for ``BOT_AGENT`` tests: one Agent, one thing that is not an Agent."""

from __future__ import annotations

from agents import Agent
from agents.models import ScriptedModel, reply
from storage import InMemoryStorage

agent = Agent(id="served", model=ScriptedModel([reply("served")]))
"""An agent without storage or memory: the bot gives it the configured ones."""

own_store = InMemoryStorage()
agent_with_storage = Agent(id="own", model=ScriptedModel([]), storage=own_store)
"""An agent that brought its own storage."""

not_an_agent = "just a string"
