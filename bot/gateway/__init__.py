"""The gateway (SPEC 17): countersign in front of agents it did not build.

MCP clients connect to ``/mcp`` (``GatewayHTTP``: the official ``mcp`` SDK's Streamable HTTP
server on the bot's own app, ``GatewayMCP`` its tools) or run ``python -m bot gateway --stdio``
(``relay_stdio``, a thin relay to a running bot); coding agents' hooks ask ``POST /api/gate``
(``GateAnswers``), which ``python -m bot hook claude-code`` calls (``run_hook``). Every call is
one run of the gateway agent (``gateway_agent``, agent id ``gateway``; its tools are
``GatewayTools``), put through the runtime's one gate by ``Gateway.ask``: a held call is a
pending call like any other, and the client's request waits for its outcome in storage. Its
card is posted by a ``Presenter`` the Slack side implements.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.gateway._agent import GATEWAY_AGENT_ID, gateway_agent
    from bot.gateway._gate import GateAnswers
    from bot.gateway._gateway import Answer, Ask, Gateway, Origin, Presenter
    from bot.gateway._hook import DEFAULT_WAIT_SECONDS, ask_hook, hook_output, run_hook
    from bot.gateway._http import MCP_PATH, GatewayHTTP
    from bot.gateway._mcp import GatewayMCP
    from bot.gateway._relay import relay_stdio
    from bot.gateway._tools import GatewayTools, HookGate
    from bot.gateway._waiting import Wakeups

__all__ = [
    "DEFAULT_WAIT_SECONDS",
    "GATEWAY_AGENT_ID",
    "MCP_PATH",
    "Answer",
    "Ask",
    "GateAnswers",
    "Gateway",
    "GatewayHTTP",
    "GatewayMCP",
    "GatewayTools",
    "HookGate",
    "Origin",
    "Presenter",
    "Wakeups",
    "ask_hook",
    "gateway_agent",
    "hook_output",
    "relay_stdio",
    "run_hook",
]


def __getattr__(name: str) -> Any:
    """The public names, imported when one is first used: ``python -m bot hook`` imports the
    hook alone (the MCP SDK and the runtime take seconds to import)."""
    if name not in __all__:
        raise AttributeError(f"module 'bot.gateway' has no attribute {name!r}")
    from bot.gateway import _public

    value = getattr(_public, name)
    globals()[name] = value
    return value
