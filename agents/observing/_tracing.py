"""OpenTelemetry spans of the runtime (``opentelemetry-api`` only; the host configures the SDK).

One trace per stretch of a run (``agent.turn`` for a new message, ``agent.resume`` after a
decision, ``agent.retry``), with ``model.call`` and ``tool.execute`` spans inside. A run that
suspends stores its span context (W3C ``traceparent``) in the snapshot; the stretch that resumes
it, in whatever process, links to it and records ``approval.wait`` from the call's suspension to
its decision. Without a configured SDK no span is even created (``enabled()``): tracing off
costs nothing. Whether it is on is looked up once per stretch (``run_span``), not per span.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import datetime

from opentelemetry import trace
from opentelemetry.trace import Link, Span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_TRACER = trace.get_tracer("countersign.agents")
_PROPAGATOR = TraceContextTextMapPropagator()

_STRETCH_TRACED: ContextVar[bool | None] = ContextVar("countersign_stretch_traced", default=None)
"""Whether the stretch of a run under way is traced (None: outside any stretch)."""
_NO_SPAN = contextlib.nullcontext(trace.INVALID_SPAN)
"""What ``span`` gives when tracing is off (stateless, so one serves every call)."""


def tracer() -> trace.Tracer:
    """The runtime's tracer (follows the provider the host sets, even later)."""
    return _TRACER


def enabled() -> bool:
    """Whether the host configured an SDK: without one, spans are skipped altogether (free).

    Inside a stretch of a run, the answer found when it started: asking OpenTelemetry reads the
    environment each time, and a stretch would ask for every span. A provider the host sets
    meanwhile applies from the next stretch.
    """
    traced = _STRETCH_TRACED.get()
    if traced is not None:
        return traced
    return _configured()


def _configured() -> bool:
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def span(name: str, **attributes: str) -> contextlib.AbstractContextManager[Span]:
    """A child span of the current one, or a no-op when tracing is off."""
    if not enabled():
        return _NO_SPAN
    return _TRACER.start_as_current_span(name, attributes=attributes)


def current_carrier() -> dict[str, str]:
    """The current span's context as W3C headers (empty when nothing is recorded)."""
    carrier: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        _PROPAGATOR.inject(carrier)
    return carrier


def links_to(carrier: dict[str, str]) -> list[Link]:
    """A link to the span stored in ``carrier`` (none when it holds no valid context)."""
    if not carrier:
        return []
    context = trace.get_current_span(_PROPAGATOR.extract(carrier)).get_span_context()
    return [Link(context)] if context.is_valid else []


def run_span(
    name: str, *, run_id: str, agent_id: str, thread_id: str | None, carrier: dict[str, str]
) -> contextlib.AbstractContextManager[Span]:
    """A stretch of a run: a new trace (or a child of the calling run), linked to ``carrier``."""
    if not _configured():
        return _Untraced()
    attributes = {"countersign.run_id": run_id, "countersign.agent_id": agent_id}
    if thread_id:
        attributes["countersign.thread_id"] = thread_id
    return _traced(name, attributes, carrier)


class _Untraced:
    """A stretch without tracing: no span, and the spans inside it need not ask again.

    A class, not a generator like ``_traced``: every stretch enters one when tracing is off.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> Span:
        self._token = _STRETCH_TRACED.set(False)
        return trace.INVALID_SPAN

    def __exit__(self, *exc_info: object) -> None:
        _STRETCH_TRACED.reset(self._token)


@contextlib.contextmanager
def _traced(name: str, attributes: dict[str, str], carrier: dict[str, str]) -> Iterator[Span]:
    token = _STRETCH_TRACED.set(True)
    try:
        with _TRACER.start_as_current_span(
            name, attributes=attributes, links=links_to(carrier)
        ) as span:
            yield span
    finally:
        _STRETCH_TRACED.reset(token)


def record_wait(
    *, tool_name: str, tool_call_id: str, since: datetime, carrier: dict[str, str]
) -> None:
    """``approval.wait``: from the call's suspension until now, linked to the suspended run."""
    if not enabled():
        return
    span = _TRACER.start_span(
        "approval.wait",
        start_time=int(since.timestamp() * 1e9),
        links=links_to(carrier),
        attributes={"countersign.tool": tool_name, "countersign.tool_call_id": tool_call_id},
    )
    span.end()
