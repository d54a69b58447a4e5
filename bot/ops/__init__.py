"""Operating the bot (SPEC 13): ``/metrics``, JSON logs, draining on SIGTERM, tracing.

``install_metrics`` serves Prometheus metrics fed by the runtime's ``agents.Observer``;
``JsonFormatter`` is ``LOG_FORMAT=json``; ``install_drain`` refuses new Slack deliveries once
draining starts; ``start_tracing`` exports OpenTelemetry spans when an OTLP endpoint is set.
"""

from bot.ops._drain import DRAIN, Drain, install_drain
from bot.ops._jsonlog import JsonFormatter
from bot.ops._metrics import METRICS, Metrics, install_metrics, slack_kind
from bot.ops._tracing import Tracing, start_tracing

__all__ = [
    "DRAIN",
    "METRICS",
    "Drain",
    "JsonFormatter",
    "Metrics",
    "Tracing",
    "install_drain",
    "install_metrics",
    "slack_kind",
    "start_tracing",
]
