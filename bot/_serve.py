"""Start the bot: storage, agent, Slack client, ``auth.test``, the served agent (built once:
``bot._assembly``), then HTTP or Socket Mode."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, PendingToolCall, TakenDecision
from bot._agent_loader import import_agent
from bot._assembly import serve_agent, serve_gateway
from bot._errors import BotConfigError
from bot._mcp_servers import CallLimits, mcp_servers
from bot._settings import Settings
from bot._settings_checks import AUTH_TEST_FAILED
from bot.api import ApiAccess, DecisionObserver, ExtensionObserver, Gate, add_api_routes
from bot.background import Background
from bot.coordination import shared_coordination
from bot.demo import notes_server, openai_client, ops_agent
from bot.local import LocalSlack
from bot.ops import DRAIN, Metrics, install_drain, install_metrics, start_tracing
from bot.slack import (
    HEALTH_CHECKS,
    GatewayCards,
    ServedAgents,
    Services,
    create_bolt_app,
    create_services,
    create_web_app,
    create_web_client,
    publish,
    show_extension,
)
from storage import Storage, create_storage
from tools.examples import DemoDB, demo_database_url

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from bot.gateway import GatewayHTTP, GatewayMCP

logger = logging.getLogger(__name__)

AUTH_TEST_TIMEOUT_SECONDS = 10.0
"""How long start-up waits for Slack's ``auth.test`` before serving anyway (not ready)."""


def build_agent(
    settings: Settings,
    db: DemoDB | None = None,
    storage: Storage | None = None,
    openai: AsyncOpenAI | None = None,
) -> Agent:
    """``BOT_AGENT`` when set, else the built-in ops agent on ``db``'s demo tables (its OpenAI
    model on ``openai``, default a client built from the settings)."""
    if settings.model == "offline":
        logger.info(
            "MODEL=offline: the agent runs on the offline model; call a tool with "
            "/call <tool> key=value (/call alone lists them)"
        )
    if settings.bot_agent:
        return import_agent(settings.bot_agent)
    if settings.openai_api_key is None and settings.model is None:
        logger.warning(
            "OPENAI_API_KEY is not set: the built-in agent runs on the offline demo model. Set "
            "it (and OPENAI_BASE_URL for a compatible server) to use OpenAI"
        )
    db = db or DemoDB(demo_database_url(settings.storage_url))
    return ops_agent(settings, db, storage, client=openai)


@contextlib.asynccontextmanager
async def running_bot(
    settings: Settings, *, agent: Agent | None = None
) -> AsyncIterator[tuple[Services, web.AppRunner]]:
    """Everything started and listening; stopped and drained on exit. The policy file's MCP
    servers start first; the served agent is then built once (``serve_agent``) with their
    tools, the configured storage, the rules and the metrics, and every surface serves it.

    With no Slack token this is the local workspace (``bot.local``): the same app, served
    against an emulated Slack on the same server.
    """
    storage = create_storage(settings.storage_url)
    built_in = agent is None and not settings.bot_agent
    db = DemoDB(demo_database_url(settings.storage_url)) if built_in else None
    openai = openai_client(settings) if built_in else None
    try:
        given = agent or build_agent(settings, db, storage, openai)
        local = LocalSlack(settings) if settings.slack_bot_token is None else None
        if local is not None:
            settings = local.settings
            client = create_web_client(local.token, api_url=local.api_url)
        else:
            client = await _checked_client(settings)
        metrics = Metrics()
        async with (
            mcp_servers(
                settings.policy.mcp_servers,
                settings.mcp_environ,
                CallLimits(
                    timeout_seconds=settings.mcp_call_timeout_seconds,
                    output_max_bytes=settings.tool_output_max_bytes,
                ),
                taken=given.tools,
                extra=[notes_server()] if built_in and local and settings.gateway_on else [],
            ) as mcp,
            shared_coordination(
                settings.redis_url, lease_seconds=settings.claim_lease_seconds
            ) as shared,
        ):
            served = serve_agent(
                given,
                settings=settings,
                storage=storage,
                client=client,
                tools=mcp.tools,
                observers=(metrics.observer(),),
            )
            gateway = (
                serve_gateway(served, settings=settings, mcp=mcp) if settings.gateway_on else None
            )
            agents = ServedAgents(
                served.agent,
                *([gateway.agent] if gateway is not None else []),
                seen=gateway.tools.saw if gateway is not None else None,
            )
            services = create_services(
                agent=agents,
                policy=served.policy,
                client=client,
                settings=settings,
                locks=shared.locks,
                dedupe=shared.dedupe,
            )
            endpoint = None
            if gateway is not None:
                from bot.gateway import GatewayMCP

                endpoint = GatewayMCP(gateway, hold_seconds=settings.gateway_hold_seconds)
                mcp.listeners.append(endpoint.tools_changed)  # list_changed passed on
            async with _serving(
                services, metrics, local, redis_ping=shared.ping, gateway=endpoint
            ) as runner:
                if local is not None:
                    await local.check(client)
                yield services, runner
    finally:
        if openai is not None:
            await openai.close()
        if db is not None:
            await db.close()
        await storage.close()


async def _checked_client(settings: Settings) -> AsyncWebClient:
    """The Web API client, after ``auth.test`` accepted the token."""
    assert settings.slack_bot_token is not None
    client = create_web_client(
        settings.slack_bot_token.get_secret_value(), api_url=settings.slack_api_url
    )
    try:
        async with asyncio.timeout(AUTH_TEST_TIMEOUT_SECONDS):
            auth = await client.auth_test()
    except SlackApiError as exc:
        if exc.response.status_code < 500:  # the token was refused: nothing will work
            raise BotConfigError(
                [AUTH_TEST_FAILED.format(error=exc.response.get("error", "unknown"))]
            ) from None
        _slack_unreachable(f"status {exc.response.status_code}")
        return client
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        _slack_unreachable(type(exc).__name__)
        return client
    logger.info("connected to Slack team %s as %s", auth.get("team_id"), auth.get("user_id"))
    return client


def _slack_unreachable(why: str) -> None:
    logger.warning(
        "Slack's auth.test did not answer (%s): check SLACK_API_URL and the network path to "
        "Slack; serving anyway, /readyz answers 503 until Slack answers",
        why,
    )


@contextlib.asynccontextmanager
async def _serving(
    services: Services,
    metrics: Metrics,
    local: LocalSlack | None = None,
    *,
    redis_ping: Callable[[], Awaitable[bool]] | None = None,
    gateway: GatewayMCP | None = None,
) -> AsyncIterator[web.AppRunner]:
    settings = services.settings
    socket_mode = settings.mode == "socket"
    secret = settings.slack_signing_secret
    bolt = create_bolt_app(
        services,
        signing_secret=None if socket_mode or secret is None else secret.get_secret_value(),
    )
    web_app = create_web_app(services, None if socket_mode else bolt)
    http = _install_gateway(web_app, services, gateway)
    gate: Gate | None = None
    if gateway is not None:
        from bot.gateway import GateAnswers

        gate = GateAnswers(gateway.gateway)
    install_api(web_app, services, gate=gate)
    if redis_ping is not None:
        web_app[HEALTH_CHECKS]["redis"] = redis_ping
    install_metrics(web_app, metrics, services.agent)
    drain = install_drain(web_app)
    web_app[HEALTH_CHECKS]["draining"] = drain.ready
    if local is not None:
        local.install(web_app, services.agent.main)
    runner = web.AppRunner(web_app)
    await runner.setup()
    handler: AsyncSocketModeHandler | None = None
    background: Background | None = None
    sessions = contextlib.AsyncExitStack()
    try:
        if http is not None:
            await sessions.enter_async_context(http.running())
        site = local.site(runner) if local else web.TCPSite(runner, settings.host, settings.port)
        await site.start()
        logger.info("serving %s mode on %s:%s", settings.mode, settings.host, settings.port)
        if socket_mode and settings.slack_app_token is not None:
            handler = AsyncSocketModeHandler(bolt, settings.slack_app_token.get_secret_value())
            await handler.connect_async()  # type: ignore[no-untyped-call]
            web_app[HEALTH_CHECKS]["socket"] = handler.client.is_connected
        background = Background(services).start()  # expiry sweep, crash recovery
        yield runner
    finally:
        if background is not None:
            await background.stop()
        if handler is not None:
            await handler.close_async()  # type: ignore[no-untyped-call]
        await runner.cleanup()
        await sessions.aclose()


def install_api(web_app: web.Application, services: Services, *, gate: Gate | None = None) -> None:
    """Mount ``/api`` for the served agents when ``API_TOKEN`` or ``API_TOKENS`` is set;
    decisions show in Slack; ``gate`` answers ``POST /api/gate`` (the gateway's hook)."""
    add_api_routes(
        web_app,
        {agent.id: agent for agent in services.agent.served},
        ApiAccess.of(services.settings),
        on_decision=_shown_in_slack(services),
        on_extended=_extension_shown_in_slack(services),
        gate=gate,
    )


def _install_gateway(
    web_app: web.Application, services: Services, endpoint: GatewayMCP | None
) -> GatewayHTTP | None:
    """Serve the gateway's MCP server at ``/mcp`` (SPEC 17); its cards go to
    ``GATEWAY_CHANNEL``."""
    if endpoint is None:
        return None
    from bot.gateway import MCP_PATH, GatewayHTTP

    settings = services.settings
    assert settings.gateway_channel is not None  # checked with the settings; local sets it
    endpoint.gateway.presenter = GatewayCards(services, settings.gateway_channel)
    http = GatewayHTTP(endpoint, ApiAccess.of(settings))
    http.install(web_app)
    logger.info(
        "gateway on: MCP clients at %s, hooks at /api/gate, cards in %s",
        MCP_PATH,
        settings.gateway_channel,
    )
    return http


def _shown_in_slack(services: Services) -> DecisionObserver:
    """The API's decision hook, implemented by the Slack edge (card updated, thread continued)."""

    async def show(taken: TakenDecision) -> None:
        await publish(services, taken)

    return show


def _extension_shown_in_slack(services: Services) -> ExtensionObserver:
    """The API's extension hook, implemented by the Slack edge (the card's new expiry)."""

    async def show(agent_id: str, run_id: str, call: PendingToolCall) -> None:
        await show_extension(services, run_id, call)

    return show


async def serve_forever(settings: Settings) -> None:
    """Run until SIGINT or SIGTERM, then drain (new Slack deliveries get 503, running work
    finishes within the grace period), flush traces and stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    tracing = start_tracing(settings.otel_exporter_otlp_endpoint)
    try:
        async with running_bot(settings) as (services, runner):
            await stop.wait()
            await runner.app[DRAIN].drain(services.runner)
    finally:
        tracing.shutdown()
    logger.info("stopped")
