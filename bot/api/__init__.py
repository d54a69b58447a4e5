"""The HTTP API (SPEC 7): ``/api`` for approval UIs outside Slack, and its wire schemas.

``add_api_routes`` mounts it on an aiohttp app for some agents, with the tokens it accepts and
who each decides as (``ApiAccess``); decisions taken through it are
reported to the ``on_decision`` hook it is given (``DecisionObserver``), which is how the bot
shows them in Slack without this package knowing about Slack. ``bot.client.Client`` speaks
the same schemas and errors.
"""

from bot.api._errors import (
    PENDING_CALL_NOT_FOUND,
    AgentNotFound,
    ApiAuthError,
    ApiError,
    ApiRequestError,
    error_from,
)
from bot.api._gate import Gate, GateOut, GateRequest
from bot.api._grant_schemas import GrantOut, GrantRequestIn, GrantsOut
from bot.api._hook import DecisionObserver, ExtensionObserver
from bot.api._identity import ApiAccess, Caller
from bot.api._routes import add_api_routes
from bot.api._schemas import DecideManyOut, DecisionOut, PendingToolCallOut, SuspendedRunsPageOut

__all__ = [
    "PENDING_CALL_NOT_FOUND",
    "AgentNotFound",
    "ApiAccess",
    "ApiAuthError",
    "ApiError",
    "ApiRequestError",
    "Caller",
    "DecideManyOut",
    "DecisionObserver",
    "DecisionOut",
    "ExtensionObserver",
    "Gate",
    "GateOut",
    "GateRequest",
    "GrantOut",
    "GrantRequestIn",
    "GrantsOut",
    "PendingToolCallOut",
    "SuspendedRunsPageOut",
    "add_api_routes",
    "error_from",
]
