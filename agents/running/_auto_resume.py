"""Auto-resume: a plain user message may be the data a suspended tool is waiting for.

For each call in the thread that suspended itself (most recent first), one structured-output
request asks the model whether the message answers it. Only ``suspend()`` calls qualify:
calls waiting for APPROVAL are never decided by text or by the model.

What it audits is the runtime's own vocabulary: the source ``thread-reply`` (a message in the
run's thread) and the decision ``resume``; an edge's words (a Slack button's "provide") stay
in the edge.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError

from agents._ids import new_id
from agents._messages import Message
from agents._results import PendingToolCall, SuspendedRunsPage
from agents._runtime import Runtime
from agents.deciding._decide import decide
from agents.deciding._listing import list_suspended_runs
from agents.decisions import DecisionRequest, Resume
from agents.errors import AgentError, NotAllowedToDecide
from agents.models._base import ModelRequest, ObjectOutput, TextDelta
from agents.running._stream import AgentStream
from storage import AuditEvent, utcnow

logger = logging.getLogger(__name__)

SOURCE = "thread-reply"
"""How an auto-resumed call was decided: by a message in its thread."""

EXTRACTION_INSTRUCTIONS = (
    "A tool is paused, waiting for information from the user. Decide whether the user's "
    "message provides that information. If it does, set answered to true and fill resume_data "
    "with exactly the fields the schema asks for, taken from the message. If it does not (the "
    "user asks something else, or leaves required fields unknown), set answered to false and "
    "resume_data to null. Never invent values. Approving or declining actions is NOT "
    "information: such messages are never an answer."
)


def response_schema(resume_schema: dict[str, Any]) -> dict[str, Any]:
    """The exact structured-output schema of one extraction request (SPEC 3.5)."""
    return {
        "type": "object",
        "properties": {
            "answered": {"type": "boolean"},
            "resume_data": {"anyOf": [resume_schema, {"type": "null"}]},
        },
        "required": ["answered", "resume_data"],
        "additionalProperties": False,
    }


async def try_auto_resume(
    rt: Runtime,
    message: str,
    *,
    thread_id: str,
    resource_id: str | None,
    decided_by: str | None,
    listing: SuspendedRunsPage | None = None,
) -> AgentStream | None:
    """Resume the suspended call this message answers, or None (a normal turn follows).

    ``listing``: the thread's suspended runs when the caller has read them already (each
    decision still checks its call inside the claim, so a stale listing decides nothing wrong).
    """
    if listing is None:
        listing = await list_suspended_runs(
            rt, thread_id=thread_id, resource_id=None, page=None, per_page=None
        )
    waiting = sorted(
        (
            (run.run_id, call)
            for run in listing.runs
            if run.thread_id == thread_id
            for call in run.tool_calls
            if not call.requires_approval and call.resume_schema is not None
        ),
        key=lambda item: item[1].suspended_at or utcnow(),
        reverse=True,
    )
    for run_id, call in waiting:
        data = await _extract(rt, message, call)
        if data is None:
            continue
        try:
            request = DecisionRequest(
                run_id=run_id,
                tool_call_id=call.tool_call_id,
                decided_by=decided_by,
                source=SOURCE,
            )
            stream = await decide(rt, request, Resume(data=data))
        except NotAllowedToDecide as exc:  # the reply is a normal turn; the refusal is audited
            await rt.storage.append_audit(
                AuditEvent(
                    id=new_id(),
                    at=utcnow(),
                    kind="refused",
                    run_id=run_id,
                    tool_call_id=call.tool_call_id,
                    thread_id=thread_id,
                    agent_id=rt.id,
                    actor=decided_by,
                    source=SOURCE,
                    data={"rule": exc.rule, "decision": "resume"},
                )
            )
            continue
        except AgentError as exc:
            logger.info("auto-resume of %s/%s not applied: %s", run_id, call.tool_call_id, exc)
            continue
        if rt.memory is not None:
            await rt.memory.append(
                thread_id, resource_id, run_id, [Message(role="user", content=message)]
            )
        return stream
    return None


async def _extract(rt: Runtime, message: str, call: PendingToolCall) -> Any | None:
    assert call.resume_schema is not None
    context = {
        "tool": call.tool_name,
        "tool_arguments": call.args,
        "question": call.suspend_payload,
    }
    request = ModelRequest(
        messages=[
            Message(role="system", content=EXTRACTION_INSTRUCTIONS),
            Message(
                role="user",
                content=f"Paused tool call: {json.dumps(context)}\n\nUser message: {message}",
            ),
        ],
        response_schema=response_schema(call.resume_schema),
        response_schema_name="resume_data",
    )
    value: Any = None
    text: list[str] = []
    try:
        async for event in rt.model.stream(request):
            if isinstance(event, ObjectOutput):
                value = event.value
            elif isinstance(event, TextDelta):
                text.append(event.text)
    except AgentError as exc:
        logger.warning("auto-resume extraction failed: %s", exc)
        return None
    if value is None and text:
        try:
            value = json.loads("".join(text))
        except ValueError:
            return None
    if not isinstance(value, dict) or value.get("answered") is not True:
        return None
    data = value.get("resume_data")
    tool = rt.find_tool(call.agent_path, call.tool_name)
    if tool is not None and tool.resume_schema is not None:
        try:
            tool.parse_resume(data)
        except ValidationError:
            return None
    return data
