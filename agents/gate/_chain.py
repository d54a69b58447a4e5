"""The two chains of gates, in order, and the questions asked of them.

``propose``: what a call about to run or wait needs (asked by the run loop for each model call,
and by the edit gate for edited arguments). ``judge``: whether a decision may be taken on a
stored call and what it does (asked inside every decision, single or batch, by a grant's use,
and by the edges before they open a form: ``ask``). A new rule is a new gate module and one line
here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agents.errors import AgentError
from agents.gate._judgement import Case, Verdict, verdict_of
from agents.gate._proposing import PROPOSAL_GATES, propose
from agents.gate.gates._authority import may_decide
from agents.gate.gates._edits import edits
from agents.gate.gates._expiry import not_expired
from agents.gate.gates._grants import grant_request
from agents.gate.gates._quorum import quorum_approver, quorum_tally
from agents.gate.gates._redefined import same_definition

__all__ = ["JUDGEMENT_GATES", "PROPOSAL_GATES", "ask", "judge", "propose"]

JudgementGate = Callable[[Case], Awaitable[Case]]
"""One gate: reads the case, raises its refusal or returns the case with what it settles."""

JUDGEMENT_GATES: tuple[JudgementGate, ...] = (
    not_expired,  # past expires_at, only the system decides (3.3)
    may_decide,  # withdrawal by its requester; else the decision policy (3.3)
    quorum_approver,  # a quorum's approval names a person, once (3.3)
    same_definition,  # the tool that would run is the one shown (3.3)
    grant_request,  # a grant asked for is allowed and within bounds (15)
    edits,  # edited arguments run, or are a new proposal (3.3)
    quorum_tally,  # who counts, asked again at the quorum (authority at decision time)
)
"""Whether a decision may be taken and what it does, asked in this order."""


async def judge(case: Case) -> Case:
    """``case`` through every judgement gate, in order (each refusal is raised)."""
    for gate in JUDGEMENT_GATES:
        case = await gate(case)
    return case


async def ask(case: Case) -> Verdict:
    """The verdict on ``case`` without writing anything: what the decision would do, or why it
    may not be taken (``Verdict.refused``)."""
    try:
        judged = await judge(case)
    except AgentError as refused:
        return Verdict(effect=None, refused=refused, needed=case.pending.approvals_required)
    return verdict_of(judged)
