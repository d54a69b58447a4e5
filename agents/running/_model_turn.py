"""One model turn of a run: the conversation read, the model streamed, its text emitted as it
comes; returns the text, the tool calls and the usage."""

from __future__ import annotations

from agents._messages import ToolCallPart
from agents._runtime import Runtime
from agents.models._base import ModelRequest, ObjectOutput, TextDelta, ToolCallRequest, Usage
from agents.observing._tracing import span
from agents.running._chunks import TextDeltaChunk
from agents.running._stream import AgentStream
from agents.stored._state import RunState
from agents.stored._writes import patiently


async def model_turn(
    rt: Runtime, state: RunState, stream: AgentStream, *, patient: bool
) -> tuple[str, list[ToolCallPart], Usage]:
    """Ask the model once. ``patient``: the thread is owed this answer (a call was decided), so
    reading the conversation waits out a storage outage."""
    if patient:
        messages = await patiently(rt, state.run_id, lambda: rt.conversation(state))
    else:
        messages = await rt.conversation(state)
    request = ModelRequest(messages=messages, tools=rt.tool_specs())
    text: list[str] = []
    calls: list[ToolCallPart] = []
    usage = Usage()
    with span("model.call"):
        async for event in rt.model.stream(request):
            if isinstance(event, TextDelta):
                text.append(event.text)
                stream.emit(TextDeltaChunk(run_id=state.run_id, text=event.text))
            elif isinstance(event, ToolCallRequest):
                calls.append(ToolCallPart(id=event.id, name=event.name, args=event.args))
            elif isinstance(event, Usage):
                usage = usage + event
            elif isinstance(event, ObjectOutput):
                text.append(str(event.value))
    return "".join(text), calls, usage
