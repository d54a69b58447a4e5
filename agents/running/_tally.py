"""What one stretch of a run produced (text, calls, results, steps, usage) for its result."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents._messages import ToolCallPart
from agents._results import (
    FinishReason,
    PendingToolCall,
    RunResult,
    StepResult,
    ToolCallRecord,
    ToolResultRecord,
)
from agents.models._base import Usage
from agents.running._chunks import ToolOutputDeniedChunk, ToolResultChunk
from agents.running._stream import AgentStream
from agents.stored._outcome import Outcome


@dataclass
class Tally:
    """Collects a stretch of a run as it happens; ``result()`` makes its ``RunResult``."""

    text: str = ""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    tool_results: list[ToolResultRecord] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def record_step(self, text: str, calls: list[ToolCallPart], usage: Usage) -> None:
        """One model turn and the results of its calls that are known by now."""
        records = [ToolCallRecord(tool_call_id=c.id, tool_name=c.name, args=c.args) for c in calls]
        self.tool_calls.extend(records)
        ids = {c.id for c in calls}
        self.steps.append(
            StepResult(
                text=text,
                tool_calls=records,
                tool_results=[r for r in self.tool_results if r.tool_call_id in ids],
                usage=usage,
            )
        )

    def result(
        self,
        run_id: str,
        reason: FinishReason,
        pending: list[PendingToolCall],
        error: BaseException | None = None,
    ) -> RunResult:
        """The ``RunResult`` of this stretch (``pending`` only counts when suspended)."""
        return RunResult(
            text=self.text,
            finish_reason=reason,
            run_id=run_id,
            pending=pending if reason == "suspended" else [],
            tool_calls=list(self.tool_calls),
            tool_results=list(self.tool_results),
            steps=list(self.steps),
            usage=self.usage,
            error=error,
        )

    def announce(
        self, stream: AgentStream, call_id: str, local_tool: str, outcome: Outcome
    ) -> None:
        """Count a terminal outcome and tell the stream (nothing for one still pending)."""
        if not outcome.terminal:
            return
        self.tool_results.append(
            ToolResultRecord(tool_call_id=call_id, tool_name=local_tool, result=outcome.result)
        )
        if outcome.status == "denied":
            stream.emit(
                ToolOutputDeniedChunk(
                    run_id=stream.run_id,
                    tool_call_id=call_id,
                    tool_name=local_tool,
                    reason=outcome.reason,
                )
            )
        else:
            stream.emit(
                ToolResultChunk(
                    run_id=stream.run_id,
                    tool_call_id=call_id,
                    tool_name=local_tool,
                    result=outcome.result,
                )
            )
