"""OpenTelemetry at the edge: the SDK and the OTLP exporter are set up only when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (imported then, not before); otherwise nothing is
configured and the runtime's spans are the API's free no-ops.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

SERVICE_NAME = "countersign"


@dataclass(frozen=True)
class Tracing:
    """The tracer provider this process set up (None: tracing is off)."""

    provider: Any = None

    def shutdown(self) -> None:
        """Flush the spans still buffered and stop exporting (at exit)."""
        if self.provider is not None:
            self.provider.shutdown()


def start_tracing(endpoint: str | None) -> Tracing:
    """Export spans over OTLP/HTTP to ``endpoint`` (the standard ``OTEL_EXPORTER_OTLP_*``
    variables tune the exporter); off when ``endpoint`` is None."""
    if endpoint is None:
        return Tracing()
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    traces = endpoint.rstrip("/") + "/v1/traces"
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces)))
    trace.set_tracer_provider(provider)
    logger.info("tracing: exporting spans over OTLP to %s", traces)
    return Tracing(provider)
