"""OpenTelemetry spans (SPEC 13): a trace per turn, model and tool spans, and the resumed run
linked to the one that suspended, through the snapshot (as another process would load it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import Tool

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The SDK recording into memory (the global provider can be set once per process)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _named(spans: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if s.name == name]


async def test_a_turn_is_one_trace_with_the_model_call_and_the_tool_inside(
    spans: InMemorySpanExporter, store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}), reply("done")]),
        tools=[make_tool()],
        storage=store,
    )
    result = await agent.generate("x", thread_id="t1")
    [turn] = _named(spans, "agent.turn")
    assert turn.parent is None
    assert turn.attributes is not None
    assert turn.attributes["countersign.run_id"] == result.run_id
    assert turn.attributes["countersign.thread_id"] == "t1"
    inside = [s for s in spans.get_finished_spans() if s is not turn]
    assert {s.context.trace_id for s in inside} == {turn.context.trace_id}
    assert [s.name for s in inside].count("model.call") == 2
    [tool] = _named(spans, "tool.execute")
    assert tool.attributes is not None
    assert tool.attributes["countersign.tool"] == "delete-record"
    assert tool.attributes["countersign.outcome"] == "ok"
    assert "1" not in [str(v) for v in tool.attributes.values()]  # no argument values


async def test_the_resumed_run_links_to_the_suspended_one_and_records_the_wait(
    spans: InMemorySpanExporter, store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    first_agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}, id="c1")]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )
    first = await first_agent.generate("x")
    [turn] = _named(spans, "agent.turn")

    restarted = Agent(  # another process: only the snapshot connects the two
        id="a",
        model=ScriptedModel([reply("done")]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )
    await restarted.approve_tool_call_generate(run_id=first.run_id)

    [resume] = _named(spans, "agent.resume")
    assert resume.parent is None and resume.context.trace_id != turn.context.trace_id
    assert [link.context.span_id for link in resume.links] == [turn.context.span_id]
    [wait] = _named(spans, "approval.wait")
    assert wait.parent is not None and wait.parent.span_id == resume.context.span_id
    assert [link.context.trace_id for link in wait.links] == [turn.context.trace_id]
    [tool] = _named(spans, "tool.execute")
    assert tool.context.trace_id == resume.context.trace_id
