"""Tracing is configured at the edge only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot import load_settings
from bot.ops import start_tracing

pytestmark = pytest.mark.processes


def test_without_an_endpoint_nothing_is_configured_and_shutdown_is_free() -> None:
    settings = load_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"})
    assert settings.otel_exporter_otlp_endpoint is None
    tracing = start_tracing(settings.otel_exporter_otlp_endpoint)
    assert tracing.provider is None
    tracing.shutdown()


def test_serving_without_an_endpoint_never_loads_the_trace_sdk_or_the_exporter() -> None:
    # (redis imports ``opentelemetry.sdk.metrics`` on its own when installed; not ours)
    probe = (
        "import sys, bot._serve; "
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk.trace', "
        "'opentelemetry.exporter'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"


def test_with_an_endpoint_spans_go_to_its_traces_path() -> None:
    probe = (
        "from opentelemetry import trace; from bot.ops import start_tracing; "
        "t = start_tracing('http://127.0.0.1:9/'); "
        "print(type(trace.get_tracer_provider()).__name__); "
        "print(t.provider._active_span_processor._span_processors[0].span_exporter._endpoint)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["TracerProvider", "http://127.0.0.1:9/v1/traces"]
