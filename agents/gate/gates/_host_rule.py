"""Gate: the host's rules (a policy file's first matching rule, with ``args_above`` and
``args_match``; SPEC 11).

The host answers through the agent's ``call_rules`` (``agents.decisions.CallRules``): what its
rule adds (approval, a quorum, a TTL, a confirm, grant limits, escalation steps) and who may
approve under it. It only ever adds: ``require_approval`` false holds nothing back that another
gate held, and its quorum never lowers the tool's. A host whose rules raise holds the call
(fail safe); a call of an agent that is gone needs everything (held, confirmed).

``rules_in_force`` is the same question asked inside a decision: who may approve under the
rule in force NOW (a call waits for hours; an approver removed since no longer approves).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from agents._results import PendingToolCall, Requirement
from agents._runtime import Runtime
from agents.decisions import CallRules
from agents.gate._proposal import Needs, Proposal

logger = logging.getLogger(__name__)

AGENT_GONE = "the agent that owns this tool is no longer served: every rule applies"
RULES_FAILED = "the host's approval rules failed for this call: approval is required"


async def host_rule(proposal: Proposal, needs: Needs) -> Needs:
    """What the host's matching rule adds to ``needs``."""
    host = proposal.host
    if host is None:
        held = needs.hold(AGENT_GONE)
        return replace(held, requirement=held.requirement.model_copy(update={"confirm": True}))
    rules = ask_host(host, proposal.tool_name, proposal.args)
    if rules is None:
        return needs
    requirement = _requirement(needs.requirement, rules)
    needs = replace(
        needs,
        approvals=max(needs.approvals, rules.approvals or 1),
        requirement=requirement,
        host_rules=rules,
    )
    if rules.require_approval:
        needs = needs.hold(rule_words(rules))
    return needs


def ask_host(rt: Runtime, name: str, args: dict[str, object]) -> CallRules | None:
    """The host's rules for a call of ``rt`` (given a copy of ``args``); rules that raise
    require approval (fail safe)."""
    if rt.call_rules is None:
        return None
    tool = rt.tools.get(name)
    try:
        return rt.call_rules(name, tool.id if tool else name, rt.path, dict(args))
    except Exception:
        logger.exception("call_rules failed for %s of agent %s: approval required", name, rt.id)
        return CallRules(require_approval=True, rule_text=RULES_FAILED)


def rules_in_force(
    rt: Runtime, requirement: Requirement, name: str, args: dict[str, object]
) -> Requirement:
    """``requirement`` with who may approve as the host's rule says it now."""
    rules = ask_host(rt, name, args)
    if rules is None:
        return requirement
    return requirement.model_copy(
        update={
            "approvers": list(rules.approvers),
            "allow_self_approval": rules.allow_self_approval,
        }
    )


def in_force(rt: Runtime, call: PendingToolCall) -> PendingToolCall:
    """``call`` with who may approve it as the host's rule says it now (what every reader
    shows: the gate decides by the same answer)."""
    owner = owner_of(rt, call.agent_path)
    if owner is None or owner.call_rules is None:
        return call
    requirement = rules_in_force(owner, call.requirement, call.tool_name, call.args)
    return call.model_copy(update={"requirement": requirement})


def rule_words(rules: CallRules) -> str:
    """The rule, as a card says why it holds a call."""
    where = ""
    if rules.rule_number is not None:
        where = f"rule {rules.rule_number}" + (
            f" of {rules.rule_source}" if rules.rule_source else ""
        )
    text = rules.rule_text or ""
    if text and where:
        return f"{text} · {where}"
    return text or where or "the approval policy asks for approval of this call"


def _requirement(requirement: Requirement, rules: CallRules) -> Requirement:
    ttl = rules.ttl_seconds if rules.ttl_seconds is not None else requirement.ttl_seconds
    return requirement.model_copy(
        update={
            "rule": rules.rule,
            "rule_number": rules.rule_number,
            "rule_source": rules.rule_source,
            "rule_text": rules.rule_text,
            "approvers": list(rules.approvers),
            "allow_self_approval": rules.allow_self_approval,
            "confirm": requirement.confirm or rules.confirm,
            "ttl_seconds": ttl,
            "max_ttl_seconds": rules.max_ttl_seconds,
            "escalate": list(rules.escalate),
            "free_args": list(rules.free_args),
        }
    )


def owner_of(rt: Runtime, agent_path: list[str]) -> Runtime | None:
    """The runtime of the agent owning a call (``agent_path`` from the top agent down)."""
    owner = rt
    for agent_id in agent_path[1:]:
        nxt = next((a for a in owner.agents.values() if a.id == agent_id), None)
        if nxt is None:
            return None
        owner = nxt
    return owner
