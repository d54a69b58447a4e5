"""``LocalSlack``: everything local mode adds to the bot's web app.

Local mode binds its socket first (so ``PORT=0`` works and the URL is known), generates a bot
token and a signing secret, and points the bot's real ``AsyncWebClient`` at the emulated Web
API on the same server. The bot is then served exactly as in HTTP mode: bolt checks every
delivery's signature with the generated secret.
"""

from __future__ import annotations

import logging
import secrets
import socket

from aiohttp import web
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

import bot.local._text as text
from agents import Agent
from bot._errors import BotConfigError
from bot._settings import Settings
from bot.demo import DEMO_MODEL_ID
from bot.local._delivery import Delivery
from bot.local._page import Page
from bot.local._persist import keep_in_storage
from bot.local._webapi import API_PATH, RESPOND_PATH, WebAPI
from bot.local._workspace import CHANNEL_ID, PEOPLE, WORKSPACE, Workspace
from bot.slack import EVENTS_PATH

logger = logging.getLogger(__name__)


def model_label(agent: Agent) -> str:
    """What the page header says about the model: OpenAI's model name or the demo model."""
    model_id = agent.model.model_id
    if model_id == DEMO_MODEL_ID:
        return text.MODEL_DEMO
    if model_id.startswith("openai/"):
        return text.MODEL_OPENAI.format(model=model_id.removeprefix("openai/"))
    return model_id


class LocalSlack:
    """The local workspace: a bound socket, the emulated Web API and delivery, the page."""

    def __init__(self, settings: Settings) -> None:
        self.token = "xoxb-local-" + secrets.token_hex(12)
        """The bot token the emulated Web API accepts (new at every start)."""
        self.secret = secrets.token_hex(16)
        """The signing secret deliveries are signed with (new at every start)."""
        try:
            self.socket = _bind(settings.host, settings.port)
        except OSError as exc:
            raise BotConfigError(
                [text.CANNOT_BIND.format(host=settings.host, port=settings.port, error=exc)]
            ) from None
        host, port = self.socket.getsockname()[:2]
        self.url = f"http://{_reachable(host)}:{port}"
        """Where the page is served."""
        self.workspace = Workspace()
        self.delivery = Delivery(
            self.workspace,
            secret=self.secret,
            events_url=self.url + EVENTS_PATH,
            respond_url=self.url + RESPOND_PATH,
        )
        self.settings = _with_gateway(
            settings.model_copy(update={"slack_signing_secret": SecretStr(self.secret)})
        )
        """The settings, with the generated signing secret, and for the gateway (SPEC 17) its
        channel and, unless ``API_TOKENS`` is set, a token for each of its people."""

    @property
    def api_url(self) -> str:
        """The ``SLACK_API_URL`` of local mode."""
        return self.url + API_PATH

    def install(self, app: web.Application, agent: Agent) -> None:
        """Mount the emulated Web API and the page on the bot's web app."""
        app[WORKSPACE] = self.workspace
        WebAPI(self.workspace, self.token, page_url=self.url).install(app)
        Page(self.workspace, self.delivery, model=model_label(agent)).install(app)
        keep_in_storage(app, self.workspace, agent.storage)

        async def release_polls(app: web.Application) -> None:
            self.workspace.close()

        async def close_delivery(app: web.Application) -> None:
            await self.delivery.close()

        # The page long-polls its state: one access-log line per poll says nothing.
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
        app.on_shutdown.append(release_polls)
        app.on_cleanup.append(close_delivery)

    def site(self, runner: web.AppRunner) -> web.SockSite:
        """The site serving ``runner`` on the bound socket."""
        return web.SockSite(runner, self.socket)

    async def check(self, client: AsyncWebClient) -> None:
        """``auth.test`` through the bot's client: the emulated Web API answers."""
        auth = await client.auth_test()
        logger.info("local workspace %s, bot %s", auth.get("team_id"), auth.get("user_id"))
        logger.info(text.SERVING, *self.url.removeprefix("http://").rsplit(":", 1))


LOCAL_TOKENS = {f"local-{person.name}": person.id for person in PEOPLE}
"""The well-known token of each person of the local workspace (``Bearer local-sam`` is sam),
for MCP clients, hooks and ``/api`` on this machine, when ``API_TOKENS`` is not set."""


def _with_gateway(settings: Settings) -> Settings:
    """The gateway's channel (the workspace's one) and the local people's tokens."""
    if settings.gateway_channel is None:
        settings = settings.model_copy(update={"gateway_channel": CHANNEL_ID})
    if settings.api_tokens is None and settings.gateway_on:
        settings = settings.with_people(LOCAL_TOKENS)
        logger.info(text.LOCAL_TOKENS, ", ".join(LOCAL_TOKENS))
    return settings


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _reachable(host: str) -> str:
    """An address this process can reach its own socket at."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host
