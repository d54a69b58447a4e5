"""The agent runtime: agents that propose tool calls and wait for a person to countersign.

Example:
    >>> from agents import Agent
    >>> from agents.models import ScriptedModel, call, reply
    >>> agent = Agent(id="ops", model=ScriptedModel([reply("Hi")]))
"""

from agents._agent import Agent
from agents._fingerprint import fingerprint
from agents._hooks import Hooks, ToolCallInfo
from agents._parts import ServedParts, ToolGroups, ToolSource
from agents._results import (
    FinishReason,
    PendingToolCall,
    RunResult,
    StepResult,
    SuspendedRun,
    SuspendedRunsPage,
    ToolCallRecord,
    ToolResultRecord,
)
from agents.decisions import (
    Approve,
    CallRules,
    CallRulesFn,
    Decision,
    DecisionPolicy,
    DecisionRequest,
    Decline,
    Expire,
    PolicyRefusal,
    PolicyVerdict,
    Resume,
    TakenDecision,
)
from agents.errors import (
    AgentConfigError,
    AgentError,
    AlreadyDecided,
    AmbiguousToolCall,
    ApprovalExpired,
    DuplicateApproval,
    FingerprintMismatch,
    InvalidResumeData,
    InvalidToolArgs,
    LeaseLost,
    ModelError,
    NotAllowedToDecide,
    RunnerClosed,
    ScriptExhausted,
    SnapshotNotFound,
    ToolCallNotSuspended,
    ToolChanged,
)
from agents.observing._logcontext import log_context
from agents.observing._observe import DecisionTaken, Observer, ToolExecuted
from agents.running._chunks import (
    Chunk,
    ChunkBase,
    ErrorChunk,
    FinishChunk,
    Payload,
    StartChunk,
    StepFinishChunk,
    TextDeltaChunk,
    ToolCallApprovalChunk,
    ToolCallChunk,
    ToolCallResumedChunk,
    ToolCallSuspendedChunk,
    ToolOutputDeniedChunk,
    ToolResultChunk,
)
from agents.running._runner import Runner
from agents.running._stream import AgentStream
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
    "Approve",
    "CallRules",
    "CallRulesFn",
    "Chunk",
    "ChunkBase",
    "Decision",
    "DecisionPolicy",
    "DecisionRequest",
    "DecisionTaken",
    "Decline",
    "DuplicateApproval",
    "ErrorChunk",
    "Expire",
    "FingerprintMismatch",
    "FinishChunk",
    "FinishReason",
    "Hooks",
    "InvalidResumeData",
    "InvalidToolArgs",
    "LeaseLost",
    "ModelError",
    "NotAllowedToDecide",
    "Observer",
    "Payload",
    "PendingToolCall",
    "PolicyRefusal",
    "PolicyVerdict",
    "Resume",
    "RunResult",
    "Runner",
    "RunnerClosed",
    "ScriptExhausted",
    "ServedParts",
    "SnapshotNotFound",
    "StartChunk",
    "StepFinishChunk",
    "StepResult",
    "SuspendedRun",
    "SuspendedRunsPage",
    "TakenDecision",
    "TextDeltaChunk",
    "ToolCallApprovalChunk",
    "ToolCallChunk",
    "ToolCallInfo",
    "ToolCallNotSuspended",
    "ToolCallRecord",
    "ToolCallResumedChunk",
    "ToolCallSuspendedChunk",
    "ToolChanged",
    "ToolExecuted",
    "ToolGroups",
    "ToolOutputDeniedChunk",
    "ToolResultChunk",
    "ToolResultRecord",
    "ToolSource",
    "fingerprint",
    "log_context",
]
