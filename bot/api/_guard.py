"""The HTTP API's guard: who the bearer token is (401 without one it accepts), and every
error a handler raises answered as a JSON problem (the runtime's codes; 500 logged)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

import bot.api._errors as api_errors
from agents.errors import AgentError
from bot.api._identity import ApiAccess, Caller
from bot.api._input import Problem

logger = logging.getLogger("bot.api._routes")

CALLER = web.RequestKey("countersign.api.caller", Caller)
"""The request's caller (who its token decides as), set by the guard."""

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def guard_of(access: ApiAccess) -> Middleware:
    """The API's middleware: the bearer token's caller, or 401; errors as JSON problems."""

    @web.middleware
    async def guard(request: web.Request, handler: _Handler) -> web.StreamResponse:
        header = request.headers.get("Authorization", "")
        caller = _caller(header, access)
        if caller is None:
            return _unauthorized(bool(header))
        request[CALLER] = caller
        try:
            return await handler(request)
        except Problem as problem:
            return web.json_response(problem.body, status=problem.status)
        except AgentError as error:
            status = api_errors.status_of(error)
            if status >= 500:
                logger.exception("api: %s failed", request.path)
            return web.json_response(api_errors.body_of(error), status=status)
        except web.HTTPRequestEntityTooLarge as exc:
            return web.json_response(
                {"code": api_errors.PAYLOAD_TOO_LARGE, "message": exc.text or "body too large"},
                status=413,
            )
        except web.HTTPException:
            raise
        except Exception:
            logger.exception("api: %s failed", request.path)
            return web.json_response(
                {
                    "code": api_errors.INTERNAL_ERROR,
                    "message": "internal error; see the server log",
                },
                status=500,
            )

    return guard


def _caller(header: str, access: ApiAccess) -> Caller | None:
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return None
    return access.caller(given.strip())


def _unauthorized(token_given: bool) -> web.Response:
    challenge = 'Bearer realm="countersign"'
    if token_given:
        challenge += ', error="invalid_token"'
    return web.json_response(
        {
            "code": api_errors.UNAUTHORIZED,
            "message": "send Authorization: Bearer <token>: the server's API_TOKEN or your own "
            "token from its API_TOKENS file",
        },
        status=401,
        headers={"WWW-Authenticate": challenge},
    )
