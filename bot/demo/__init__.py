"""The demo: the built-in ops agent served when ``BOT_AGENT`` is unset, and the offline
``DemoModel`` it runs on when no ``OPENAI_API_KEY`` is set (SPEC 10).

Nothing here knows about Slack or HTTP; the wiring (``bot._serve``) and the local workspace
(``bot.local``) pick it up.
"""

from bot.demo._model import DEMO_MODEL_ID, DemoModel
from bot.demo._ops_agent import agent_model, openai_client, ops_agent

__all__ = ["DEMO_MODEL_ID", "DemoModel", "agent_model", "openai_client", "ops_agent"]
