"""Gate: edited arguments are a new proposal of the same call (SPEC 3.3), proposed again
through the proposal gates with THEM, never under the rules of the arguments shown.

The edit runs at once only when it needs nothing more than the call as shown: no more
approvals than one (the quorum is never lowered: the larger of the shown call's and what the
edited arguments need), no confirm the shown call lacked, and the decision policy lets the
editor approve the edited call, so their approval completes it. Otherwise the edited call is
presented again (``edited``), with the editor's approval carried when they may approve it and
the editor named (``edited_by``): an edit never lowers what a call needs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agents._fingerprint import fingerprint, strict_canonical_json
from agents.decisions import Approve
from agents.errors import InvalidToolArgs
from agents.gate._judgement import Case
from agents.gate._present import next_round
from agents.gate._proposal import Proposal
from agents.gate._proposing import propose
from agents.gate.gates._authority import refusal_of
from agents.gate.gates._host_rule import owner_of
from agents.stored._state import PendingCallState
from tools import Tool, ToolInputError


async def edits(case: Case) -> Case:
    """An approval with edited arguments: run with them, or present them as a new proposal."""
    decision = case.decision
    if not isinstance(decision, Approve) or decision.args is None:
        return case
    pending = case.pending
    args = validated_args(case.tool, pending, decision.args)
    if args == pending.args:  # nothing edited: the call as shown
        return _approving(case, Approve(grant=decision.grant))
    detail = {"edited": True, "original_args": pending.args, "args": args}
    proposal = await _proposal(case, args)
    person = case.decided_by
    allowed = await refusal_of(case.rt, proposal.public(), person, "approve") is None
    more_confirm = proposal.requirement.confirm and not case.pending.requirement.confirm
    if proposal.approvals_required == 1 and allowed and not more_confirm:
        return case.with_detail(**detail)
    carried = [person] if allowed and person is not None else []
    return case.presenting(
        proposal.model_copy(update={"carried_approvals": carried}),
        claimed_as="edited",
        detail=detail,
    )


async def _proposal(case: Case, args: dict[str, Any]) -> PendingCallState:
    """The call with ``args``, as the proposal gates gate it now."""
    pending, state = case.pending, case.state
    needs = await propose(
        Proposal(
            tool_name=pending.tool_name,
            tool=case.tool,
            args=args,
            agent_path=tuple(pending.agent_path),
            request_context=state.request_context,
            run_rule=False,
            run_ttl=state.approval_ttl_seconds,
            host=owner_of(case.rt, pending.agent_path),
        )
    )
    proposal = next_round(
        pending,
        args=dict(args),
        local_args=dict(args) if pending.delegate is None else pending.local_args,
        fingerprint=fingerprint(pending.tool_name, args),
        approvals_required=max(pending.approvals_required, needs.approvals),
        edited_from=dict(pending.args),
        edited_by=case.decided_by,
        definition_digest=case.tool.definition_digest if case.tool is not None else None,
        requirement=needs.requirement,
        grantable=False,  # an edited proposal never creates a grant, nor is approved by one
        grant_max_seconds=None,
        grant_max_uses=None,
    )
    if proposal.suspended_at is not None:
        proposal = proposal.model_copy(
            update={"expires_at": needs.expires_at(proposal.suspended_at)}
        )
    return proposal


def _approving(case: Case, decision: Approve) -> Case:
    return replace(case, decision=decision)


def validated_args(
    tool: Tool | None, pending: PendingCallState, args: dict[str, Any]
) -> dict[str, Any]:
    """The edited arguments, checked against the input schema and kept as the person gave
    them (a dump of the parsed model would turn ``250`` into ``250.0`` for a float field);
    ``InvalidToolArgs`` before anything is claimed."""
    try:
        strict_canonical_json(args).encode("utf-8")  # stored, shown and fingerprinted as given
    except (ValueError, UnicodeEncodeError):
        error = {"loc": [], "msg": "not strict JSON (NaN, Infinity or a lone surrogate)"}
        raise InvalidToolArgs(pending.tool_call_id, [{**error, "type": "json_invalid"}]) from None
    except TypeError:
        pass  # keys of mixed types: the schema says what it makes of them
    if tool is None:
        return dict(args)
    try:
        tool.parse_input(args)
    except ToolInputError as exc:
        raise InvalidToolArgs(pending.tool_call_id, list(exc.errors)) from None
    return dict(args)
