"""The demo: the built-in ops agent served when ``BOT_AGENT`` is unset, the offline
``DemoModel`` it runs on when no ``OPENAI_API_KEY`` is set (SPEC 10), and the ``notes`` MCP
server the local workspace's gateway serves (SPEC 17).

Nothing here knows about Slack or HTTP; the wiring (``bot._serve``) and the local workspace
(``bot.local``) pick it up.
"""

from bot.demo._model import DEMO_MODEL_ID, DemoModel
from bot.demo._notes import NOTES_SERVER, notes_server
from bot.demo._ops_agent import agent_model, openai_client, ops_agent

__all__ = [
    "DEMO_MODEL_ID",
    "NOTES_SERVER",
    "DemoModel",
    "agent_model",
    "notes_server",
    "openai_client",
    "ops_agent",
]
