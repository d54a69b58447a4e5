"""The proposal gates, in order, and what a proposed call needs (``propose``): asked by the run
loop for each call the model makes, and by the edit gate for edited arguments."""

from __future__ import annotations

from agents._results import Requirement
from agents.gate._proposal import Needs, Proposal, ProposalGate
from agents.gate.gates._definition import definition
from agents.gate.gates._grants import grant_limits
from agents.gate.gates._host_rule import host_rule
from agents.gate.gates._tool_rule import tool_rule

PROPOSAL_GATES: tuple[ProposalGate, ...] = (
    tool_rule,  # the tool's own rule, then the run's (SPEC 3.2)
    host_rule,  # the host's matching rule: args_above, args_match, approvers, quorum, TTL (11)
    definition,  # the tool's definition: destructive by its own annotations (14)
    grant_limits,  # which standing grants approving it may create (15)
)
"""What a call needs, asked in this order."""


async def propose(proposal: Proposal) -> Needs:
    """What ``proposal`` needs: every proposal gate, in order, once."""
    needs = Needs(requirement=Requirement(ttl_seconds=proposal.run_ttl))
    for gate in PROPOSAL_GATES:
        needs = await gate(proposal, needs)
    return needs
