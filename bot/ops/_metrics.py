"""``GET /metrics``: Prometheus text format, one ``CollectorRegistry`` per web app (SPEC 13).

Labels carry only small bounded sets (decision, source, tool name, outcome, request kind,
HTTP status); never an id, an argument or a secret. ``countersign_pending_approvals`` is read
from storage at scrape time, so every instance reports the same number. Decisions, tool
executions and escalation steps come from the runtime through ``agents.Observer``; Slack
requests are counted by a middleware around ``/slack/events``.

Example:
    >>> metrics = Metrics()                           # doctest: +SKIP
    >>> served = serve_agent(agent, ..., observers=(metrics.observer(),))
    >>> install_metrics(web_app, metrics, served.agent)
    >>> # curl http://127.0.0.1:3000/metrics
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol
from urllib.parse import parse_qs

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from agents import (
    CallEscalated,
    DecisionTaken,
    Observer,
    SuspendedRunsPage,
    ToolExecuted,
)

logger = logging.getLogger(__name__)

METRICS_PATH = "/metrics"
EVENTS_PATH = "/slack/events"

KNOWN_SOURCES = frozenset(
    {"button", "modal", "api", "expiry", "slack", "python", "recovery", "grant"}
)
"""Decision sources shown as themselves; any other is counted as ``other``."""
_DECISION_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600, 86400)
_TOOL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
_SLACK_KINDS = frozenset(
    {
        "event_callback",
        "url_verification",
        "block_actions",
        "view_submission",
        "view_closed",
        "shortcut",
        "message_action",
        "block_suggestion",
    }
)

PendingCount = Callable[[], Awaitable[int]]


class Metrics:
    """The bot's metrics on their own registry (tests build many apps in one process).

    Built before the served agent, whose observers include ``observer()``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.pending = Gauge(
            "countersign_pending_approvals",
            "Runs waiting for a decision (read from storage at scrape time)",
            registry=self.registry,
        )
        self.decisions = Counter(
            "countersign_decisions",
            "Decisions taken, by decision and by where they came from",
            ["decision", "source"],
            registry=self.registry,
        )
        self.decision_seconds = Histogram(
            "countersign_decision_seconds",
            "Time from a call's approval request to its decision, by outcome (approved, "
            "declined, expired, withdrawn, granted, resumed)",
            ["outcome"],
            buckets=_DECISION_BUCKETS,
            registry=self.registry,
        )
        self.escalations = Counter(
            "countersign_escalations",
            "Escalation steps taken on calls nobody decided, by step number (1, 2, ...)",
            ["step"],
            registry=self.registry,
        )
        self.tool_executions = Counter(
            "countersign_tool_executions",
            "Tool executions, by tool and outcome (ok, error, suspended, skipped, interrupted)",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.tool_seconds = Histogram(
            "countersign_tool_seconds",
            "How long tool executions took",
            ["tool"],
            buckets=_TOOL_BUCKETS,
            registry=self.registry,
        )
        self.grants_active = Gauge(
            "countersign_grants_active",
            "Standing grants that can approve calls now (read from storage at scrape time)",
            registry=self.registry,
        )
        self.grant_uses = Counter(
            "countersign_grant_uses",
            "Calls a standing grant approved, by tool",
            ["tool"],
            registry=self.registry,
        )
        self.slack_requests = Counter(
            "countersign_slack_requests",
            "Requests Slack sent to /slack/events, by kind and HTTP status",
            ["kind", "status"],
            registry=self.registry,
        )

    def observer(self) -> Observer:
        """The runtime's reports, counted here."""
        return Observer(
            on_decision=self._decided,
            on_tool_executed=self._executed,
            on_escalation=self._escalated,
        )

    def _decided(self, event: DecisionTaken) -> None:
        source = event.source if event.source in KNOWN_SOURCES else "other"
        self.decisions.labels(decision=event.decision, source=source).inc()
        self.decision_seconds.labels(outcome=event.came_to).observe(event.waited_seconds)
        if event.source == "grant":
            self.grant_uses.labels(tool=event.tool_name).inc()

    def _escalated(self, event: CallEscalated) -> None:
        self.escalations.labels(step=str(event.step)).inc()  # a step number: a small set

    def _executed(self, event: ToolExecuted) -> None:
        self.tool_executions.labels(tool=event.tool_name, outcome=event.outcome).inc()
        if event.outcome != "interrupted":
            self.tool_seconds.labels(tool=event.tool_name).observe(event.seconds)

    async def render(self, pending: PendingCount, grants: PendingCount | None = None) -> bytes:
        """The text exposition, with the pending gauge read from storage now (``pending``),
        and the active grants gauge (``grants``)."""
        try:
            self.pending.set(await pending())
            if grants is not None:
                self.grants_active.set(await grants())
        except Exception as exc:  # storage down: keep the last value, say so once per scrape
            logger.warning("metrics: could not count pending approvals (%s)", type(exc).__name__)
        return generate_latest(self.registry)

    def count_slack_request(self, body: bytes, status: int) -> None:
        """Count one request to ``/slack/events`` by its kind (never its content)."""
        self.slack_requests.labels(kind=slack_kind(body, status), status=str(status)).inc()


def slack_kind(body: bytes, status: int) -> str:
    """What Slack sent (``event_callback``, ``block_actions``, ``command`` …), from a bounded
    set; ``unverified`` when the signature was refused, ``other`` for anything else (a body
    refused as malformed, 400, is not parsed again here: it may nest too deep to parse)."""
    if status == 401:
        return "unverified"
    if status == 400:
        return "other"
    try:
        text = body.decode("utf-8")
        if text.startswith("{"):
            kind = json.loads(text).get("type")
        else:
            form = parse_qs(text)
            if "command" in form:
                return "command"
            kind = json.loads(form.get("payload", ["{}"])[0]).get("type")
    except (UnicodeDecodeError, ValueError, AttributeError, RecursionError):
        return "other"
    return kind if isinstance(kind, str) and kind in _SLACK_KINDS else "other"


async def _body_if_verified(request: web.Request, status: int) -> bytes:
    """The body the handler read, unless the request was refused unread (401, 413)."""
    if status in (401, 413):
        return b""
    try:
        return await request.read()
    except web.HTTPException:
        return b""


METRICS = web.AppKey("countersign.metrics", Metrics)
"""The web app's ``Metrics`` (set by ``install_metrics``)."""


class Listings(Protocol):
    """What the metrics ask of the served agents (an ``Agent``, or ``ServedAgents``)."""

    async def list_suspended_runs(self, *, per_page: int | None = None) -> SuspendedRunsPage: ...

    async def count_grants(self) -> int: ...


def install_metrics(web_app: web.Application, metrics: Metrics, agent: Listings) -> Metrics:
    """Serve ``metrics`` at ``GET /metrics`` on ``web_app`` and count its Slack requests;
    ``agent`` (served with ``metrics.observer()``) is asked how many runs are pending."""

    async def pending() -> int:
        return (await agent.list_suspended_runs(per_page=1)).total

    async def grants() -> int:
        return await agent.count_grants()

    web_app[METRICS] = metrics

    async def serve(request: web.Request) -> web.Response:
        body = await metrics.render(pending, grants)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    @web.middleware
    async def count(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.path != EVENTS_PATH or request.method != "POST":
            return await handler(request)
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            metrics.count_slack_request(await _body_if_verified(request, exc.status), exc.status)
            raise
        status = response.status
        metrics.count_slack_request(await _body_if_verified(request, status), status)
        return response

    web_app.router.add_get(METRICS_PATH, serve)
    web_app.middlewares.append(count)
    return metrics
