"""The agent runtime: agents that propose tool calls and wait for a person to countersign.

Example:
    >>> from agents import Agent
    >>> from agents.models import ScriptedModel, call, reply
    >>> agent = Agent(id="ops", model=ScriptedModel([reply("Hi")]))
"""

from agents._agent import Agent
from agents._fingerprint import fingerprint
from agents._hooks import Hooks, ToolCallInfo
from agents._results import (
    Chunk,
    FinishReason,
    Payload,
    PendingToolCall,
    RunResult,
    StepResult,
    SuspendedRun,
    SuspendedRunsPage,
    ToolCallRecord,
    ToolResultRecord,
)
from agents._stream import AgentStream
from agents.errors import (
    AgentConfigError,
    AgentError,
    AlreadyDecided,
    AmbiguousToolCall,
    ApprovalExpired,
    FingerprintMismatch,
    InvalidResumeData,
    InvalidToolArgs,
    ModelError,
    ScriptExhausted,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from tools import ApprovalContext

__all__ = [
    "Agent",
    "AgentConfigError",
    "AgentError",
    "AgentStream",
    "AlreadyDecided",
    "AmbiguousToolCall",
    "ApprovalContext",
    "ApprovalExpired",
    "Chunk",
    "FingerprintMismatch",
    "FinishReason",
    "Hooks",
    "InvalidResumeData",
    "InvalidToolArgs",
    "ModelError",
    "Payload",
    "PendingToolCall",
    "RunResult",
    "ScriptExhausted",
    "SnapshotNotFound",
    "StepResult",
    "SuspendedRun",
    "SuspendedRunsPage",
    "ToolCallInfo",
    "ToolCallNotSuspended",
    "ToolCallRecord",
    "ToolResultRecord",
    "fingerprint",
]
