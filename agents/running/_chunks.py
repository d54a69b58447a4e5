"""The chunks of a run's ``full_stream``: one frozen dataclass per ``type``.

Every chunk has ``type`` (a ``Literal``, so ``match``/``if chunk.type == ...`` narrows),
``run_id``, its own typed fields, and ``payload``: the same fields as a ``Payload`` dict
(``chunk.payload["tool_call_id"]`` or ``chunk.payload.tool_call_id``). ``chunk["type"]``,
``chunk["run_id"]`` and ``chunk["payload"]`` also work.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from agents._results import FinishReason, PendingToolCall

StepFinishReason = Literal["stop", "tool-calls"]


class Payload(dict[str, Any]):
    """A chunk's fields as a dict whose keys can also be read as attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True, kw_only=True)
class ChunkBase:
    """What every chunk has: the run it belongs to, and its fields as a ``Payload``."""

    run_id: str
    """The run (the handle to decide with)."""

    @cached_property
    def payload(self) -> Payload:
        """This chunk's own fields (all but ``type`` and ``run_id``), snake_case."""
        return Payload(
            (f.name, getattr(self, f.name))
            for f in fields(self)
            if f.name not in ("type", "run_id")
        )

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None


@dataclass(frozen=True, kw_only=True)
class StartChunk(ChunkBase):
    """A stretch of the run started (a new message, a decision, a retry)."""

    type: Literal["start"] = field(default="start", init=False)


@dataclass(frozen=True, kw_only=True)
class TextDeltaChunk(ChunkBase):
    """A piece of the model's answer."""

    type: Literal["text-delta"] = field(default="text-delta", init=False)
    text: str
    """The new text."""


@dataclass(frozen=True, kw_only=True)
class ToolCallChunk(ChunkBase):
    """The model called a tool (it may still wait for approval)."""

    type: Literal["tool-call"] = field(default="tool-call", init=False)
    tool_call_id: str
    """The model's id of the call."""
    tool_name: str
    """The tool the model called (``agent-<key>`` for a sub-agent)."""
    args: dict[str, Any]
    """The arguments the model passed."""


@dataclass(frozen=True, kw_only=True)
class ToolCallApprovalChunk(ChunkBase):
    """A call waits for a person to approve or decline it (stored before this is sent).

    It carries the pending call itself (``call``): every field of ``PendingToolCall`` is read
    on the chunk (``chunk.tool_name``) and in its payload (``chunk.payload["fingerprint"]``),
    so nothing needs a listing to show one call.
    """

    type: Literal["tool-call-approval"] = field(default="tool-call-approval", init=False)
    call: PendingToolCall
    """The pending call, as ``Agent.pending_call`` returns it."""

    @cached_property
    def payload(self) -> Payload:
        """Every field of the pending call, snake_case."""
        return Payload((name, getattr(self.call, name)) for name in PendingToolCall.model_fields)

    def __getattr__(self, name: str) -> Any:
        if name == "call":  # not set yet (copying, unpickling)
            raise AttributeError(name)
        return getattr(self.call, name)

    def pending_call(self) -> PendingToolCall:
        """The pending call this chunk announces, as ``Agent.pending_call`` returns it."""
        return self.call


@dataclass(frozen=True, kw_only=True)
class ToolCallGrantedChunk(ChunkBase):
    """A gated call was approved by a standing grant instead of waiting (SPEC 15); it runs
    next (no ``tool-call-approval`` chunk for it)."""

    type: Literal["tool-call-granted"] = field(default="tool-call-granted", init=False)
    tool_call_id: str
    """The handle of the call (as a ``tool-call-approval`` would have named it)."""
    tool_name: str
    """The tool that runs."""
    args: dict[str, Any]
    """The arguments it runs with."""
    grant_id: str
    """The grant that approved it."""
    granted_by: str
    """Who granted it (the call is recorded as their decision, ``source="grant"``)."""
    uses: int
    """The grant's uses, this one included."""
    max_uses: int
    """The most calls the grant approves."""
    expires_at: datetime
    """When the grant stops approving calls."""
    within: Literal["thread", "resource"] = "thread"
    """Where the grant applies: the call's thread, or its whole resource (channel)."""
    free_args: tuple[str, ...] = ()
    """The arguments the grant lets vary (the others are pinned to the approved call's)."""


@dataclass(frozen=True, kw_only=True)
class ToolCallSuspendedChunk(ChunkBase):
    """A tool called ``suspend()``: it waits for resume data."""

    type: Literal["tool-call-suspended"] = field(default="tool-call-suspended", init=False)
    tool_call_id: str
    """The handle to resume with (the outermost call id for sub-agent calls)."""
    tool_name: str
    """The tool that suspended (the inner tool for sub-agent calls)."""
    args: dict[str, Any]
    """The arguments it ran with."""
    suspend_payload: dict[str, Any] | None
    """What the tool suspended with."""
    resume_schema: dict[str, Any] | None
    """JSON schema of the resume data, or None."""
    agent_path: list[str]
    """The chain of agent ids from the top to the agent owning the tool."""


@dataclass(frozen=True, kw_only=True)
class ToolCallResumedChunk(ChunkBase):
    """A decided call goes on: it was approved/declined, or resumed with data."""

    type: Literal["tool-call-resumed"] = field(default="tool-call-resumed", init=False)
    tool_call_id: str
    """The handle that was decided."""
    tool_name: str
    """The tool of the decided call."""
    kind: Literal["approval", "suspension"]
    """What the call was waiting for."""


@dataclass(frozen=True, kw_only=True)
class ToolResultChunk(ChunkBase):
    """A tool call produced a result (or an error the model is told about)."""

    type: Literal["tool-result"] = field(default="tool-result", init=False)
    tool_call_id: str
    """The model's id of the call."""
    tool_name: str
    """The tool the model called."""
    result: Any
    """What the model sees as the call's result."""


@dataclass(frozen=True, kw_only=True)
class ToolOutputDeniedChunk(ChunkBase):
    """A call was declined (or expired): it never ran."""

    type: Literal["tool-output-denied"] = field(default="tool-output-denied", init=False)
    tool_call_id: str
    """The model's id of the call."""
    tool_name: str
    """The tool the model called."""
    reason: str | None
    """The reason given with the decline, if any."""


@dataclass(frozen=True, kw_only=True)
class StepFinishChunk(ChunkBase):
    """A model turn ended."""

    type: Literal["step-finish"] = field(default="step-finish", init=False)
    finish_reason: StepFinishReason
    """``stop`` (the model answered) or ``tool-calls``."""


@dataclass(frozen=True, kw_only=True)
class FinishChunk(ChunkBase):
    """This stretch of the run ended; ``await stream.result()`` returns now."""

    type: Literal["finish"] = field(default="finish", init=False)
    finish_reason: FinishReason
    """As ``RunResult.finish_reason``."""


@dataclass(frozen=True, kw_only=True)
class ErrorChunk(ChunkBase):
    """The run failed; a ``finish`` chunk with ``finish_reason "error"`` follows."""

    type: Literal["error"] = field(default="error", init=False)
    error: BaseException
    """What went wrong."""


def announcement(
    call: PendingToolCall, run_id: str
) -> ToolCallApprovalChunk | ToolCallSuspendedChunk:
    """The chunk that tells the stream ``call`` now waits (an approval's carries the call)."""
    if call.requires_approval:
        return ToolCallApprovalChunk(run_id=run_id, call=call)
    own = [f.name for f in fields(ToolCallSuspendedChunk) if f.init and f.name != "run_id"]
    return ToolCallSuspendedChunk(run_id=run_id, **{name: getattr(call, name) for name in own})


Chunk = (
    StartChunk
    | TextDeltaChunk
    | ToolCallChunk
    | ToolCallApprovalChunk
    | ToolCallSuspendedChunk
    | ToolCallGrantedChunk
    | ToolCallResumedChunk
    | ToolResultChunk
    | ToolOutputDeniedChunk
    | StepFinishChunk
    | FinishChunk
    | ErrorChunk
)
"""One event of a run's ``full_stream``: any of the chunk classes, told apart by ``type``."""
