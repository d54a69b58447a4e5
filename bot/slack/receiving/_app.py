"""App factories: the bolt ``AsyncApp`` and the aiohttp ``web.Application`` serving it.

The web app is the one seam every HTTP feature plugs into: ``create_web_app`` serves
``POST /slack/events`` (HTTP mode), ``GET /healthz`` (liveness) and ``GET /readyz`` (storage,
Redis, Slack answer). Slack's signature is checked over the raw
body before anything parses it (401 whatever the body), a signed body that is not what Slack
sends gets 400, and neither logs more than a debug line; more routes (the ``/api`` of approval
UIs, the local workspace) are added to the returned app, and find the bot's ``Services`` under
``app[SERVICES]``.

Example:
    >>> bolt = create_bolt_app(services, signing_secret="…")          # doctest: +SKIP
    >>> web_app = create_web_app(services, bolt)                      # doctest: +SKIP
    >>> web.run_app(web_app, port=3000)                               # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.request_verification.async_request_verification import (
    AsyncRequestVerification,
)
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier

from bot._json_limits import SLACK_JSON_DEPTH, too_deep
from bot._logs import redact_bolt_logs
from bot.ops._ready import install_readiness
from bot.slack._services import Services
from bot.slack.receiving._envelope import is_slack_shaped
from bot.slack.receiving._grant_listeners import register_grant_listeners
from bot.slack.receiving._listeners import register_listeners

logger = logging.getLogger(__name__)

_MAX_SIGNATURE_AGE_SECONDS = 60 * 5
"""Slack's own limit (slack_sdk's SignatureVerifier refuses older requests too)."""

SERVICES = web.AppKey("countersign.services", Services)
"""Where the bot's ``Services`` live in the web app (for routes added by other modules)."""
BOLT_APP = web.AppKey("countersign.bolt", AsyncApp)
"""The bolt app behind ``/slack/events``, when served over HTTP."""

HEALTH_CHECKS = web.AppKey("countersign.health_checks", dict[str, Callable[[], Awaitable[bool]]])
"""Named dependency probes ``/readyz`` runs besides storage and Slack (``redis``, ``socket`` in
Socket Mode); False or an exception → 503. ``/healthz`` only says the process serves."""

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
SHUTDOWN_GRACE_SECONDS = 30.0
"""How long shutdown waits for background work (answers, decisions, runs) before cancelling."""


def create_bolt_app(services: Services, *, signing_secret: str | None) -> AsyncApp:
    """The bolt app with every listener registered.

    ``process_before_response=True``: a listener only acks, parses and hands its work to the
    runner, so the response goes out as soon as the work is queued (no polling for ``ack()``),
    and a request is answered only once its work is tracked by the runner.
    """
    redact_bolt_logs()  # before: bolt warns while it is built
    app = AsyncApp(
        client=services.client,
        signing_secret=signing_secret or "",
        process_before_response=True,
        request_verification_enabled=False,  # in its place, before authorization:
        before_authorize=None if signing_secret is None else _VerifiedOnce(signing_secret),
    )
    register_listeners(app, services)
    register_grant_listeners(app, services)
    return app


def create_web_app(services: Services, bolt_app: AsyncApp | None = None) -> web.Application:
    """The aiohttp app: ``/slack/events`` when ``bolt_app`` is given, and ``/healthz``.

    Shutting the app down drains the background runner.
    """
    app = web.Application()
    app[SERVICES] = services
    app[HEALTH_CHECKS] = {}
    if bolt_app is not None:
        app[BOLT_APP] = bolt_app

        secret = services.settings.slack_signing_secret
        verifier = None if secret is None else SignatureVerifier(secret.get_secret_value())

        async def slack_events(request: web.Request) -> web.Response:
            if verifier is not None and not _fresh_signature_headers(verifier, request):
                logger.debug("refused a request to %s: no fresh signature", EVENTS_PATH)
                return web.json_response({"error": "invalid_signature"}, status=401)
            try:
                body = await request.read()
            except web.HTTPRequestEntityTooLarge:
                return web.json_response({"error": "body_too_large"}, status=413)
            if verifier is not None and not _signed(verifier, body, request):
                logger.debug("refused a request to %s: missing or wrong signature", EVENTS_PATH)
                return web.json_response({"error": "invalid_signature"}, status=401)
            bolt_request = _parsed(body, request, verified=verifier is not None)
            if bolt_request is None:
                logger.debug("refused a signed request to %s: malformed body", EVENTS_PATH)
                return web.json_response({"error": "malformed_body"}, status=400)
            response: web.Response = await to_aiohttp_response(
                await bolt_app.async_dispatch(bolt_request)
            )
            return response

        app.router.add_post(EVENTS_PATH, slack_events)

    async def healthz(request: web.Request) -> web.Response:
        body = {"ok": True, "mode": services.settings.mode, "agent": services.agent.id}
        return web.json_response(body)  # liveness: the process serves (dependencies: /readyz)

    async def drain_runner(app: web.Application) -> None:
        await services.runner.close(grace_seconds=SHUTDOWN_GRACE_SECONDS)

    app.router.add_get(HEALTH_PATH, healthz)
    install_readiness(app, _readiness_probes(services), app[HEALTH_CHECKS], services.outages)
    app.on_shutdown.append(drain_runner)
    return app


def _fresh_signature_headers(verifier: SignatureVerifier, request: web.Request) -> bool:
    """Both signature headers present and the timestamp within Slack's five minutes: checked
    before the body is even read (a request without them is refused whatever its size)."""
    stamp = request.headers.get("X-Slack-Request-Timestamp", "")
    if not request.headers.get("X-Slack-Signature") or not stamp.isdigit():
        return False
    return abs(verifier.clock.now() - int(stamp)) <= _MAX_SIGNATURE_AGE_SECONDS


def _signed(verifier: SignatureVerifier, body: bytes, request: web.Request) -> bool:
    """Slack's signature over the raw body, checked before anything reads the body."""
    try:
        return verifier.is_valid_request(body, dict(request.headers))
    except (ValueError, TypeError):  # e.g. a timestamp header that is not a number
        return False


def _parsed(body: bytes, request: web.Request, *, verified: bool) -> AsyncBoltRequest | None:
    """The body as bolt reads it, or None when it is not the JSON / form Slack sends (or its
    JSON nests deeper than Slack's ever does: refused before anything parses it)."""
    try:
        text = body.decode("utf-8")
        if any(too_deep(json, limit=SLACK_JSON_DEPTH) for json in _json_texts(text)):
            return None
        parsed = AsyncBoltRequest(
            body=text,
            query=request.query_string,
            headers=dict(request.headers),
            context={VERIFIED: verified},  # our check ran: bolt's is skipped (_VerifiedOnce)
        )
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    if not is_slack_shaped(parsed.body):
        return None  # e.g. JSON sent as a form, a form without its payload, a nested field
    return parsed  # of the wrong type that bolt's middleware would raise on


def _json_texts(body: str) -> list[str]:
    """The JSON a body carries: itself (an event), or its form fields (``payload=…``)."""
    if body.lstrip().startswith(("{", "[")):
        return [body]
    return [value for values in parse_qs(body).values() for value in values]


VERIFIED = "countersign_signature_verified"
"""Set in a bolt request's context by ``/slack/events`` once it verified the signature."""


class _VerifiedOnce(AsyncRequestVerification):
    """bolt's signature check, skipped for a request ``/slack/events`` verified already (over
    the raw body, before parsing it): the signature is checked once. A request dispatched
    to the bolt app any other way is still checked here (401 when forged)."""

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        if req.context.get(VERIFIED) is True:
            return await next()
        return await super().async_process(req=req, resp=resp, next=next)


_READY_PROBE_KEY = "countersign:readyz"


def _readiness_probes(services: Services) -> dict[str, Callable[[], Awaitable[bool]]]:
    """``/readyz``'s own checks: storage answers a read, Slack answers ``auth.test``."""

    async def storage() -> bool:
        await services.storage.get_value(_READY_PROBE_KEY)
        return True

    async def slack() -> bool:
        await services.client.auth_test()
        return True

    return {"storage": storage, "slack": slack}
