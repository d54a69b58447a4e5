"""What a person (or the system) decides about a pending call: one typed value.

``Agent.decide(decision, run_id=...)`` takes any of them; ``approve_tool_call``,
``decline_tool_call`` and ``resume_stream`` are shorthands. A decision made on a supervisor
travels down to the sub-agent owning the call as the same value.

A ``DecisionRequest`` names the call and who decides it; the edges pass that one value to
``Agent.decide_request`` instead of the ids and the decider one by one.

Example:
    >>> from agents.decisions import Approve, Decline
    >>> stream = await agent.decide(Approve(args={"id": "abc-124"}), run_id=run_id)
    >>> stream = await agent.decide(Decline(reason="not today"), run_id=run_id)
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agents._results import Escalation, PendingToolCall
from agents.errors import POLICY_RULE

if TYPE_CHECKING:
    from agents.running._stream import AgentStream

DecisionKind = Literal["approve", "decline", "resume", "expire"]


GrantScope = Literal["thread", "resource"]
"""Where a standing grant applies: the call's memory thread, or every thread of its resource."""


@dataclass(frozen=True, kw_only=True)
class GrantRequest:
    """Approve this call AND later calls like it (SPEC 15): a standing, scoped, expiring grant.

    Example:
        >>> Approve(grant=GrantRequest(seconds=3600, max_uses=20, free_args=("version",)))
    """

    seconds: float
    """How long the grant lasts from now (at most the rule's ``grants.max_seconds``)."""
    max_uses: int
    """How many later calls it may approve (at most the rule's ``grants.max_uses``)."""
    within: GrantScope = "thread"
    """``thread``: calls of this call's memory thread; ``resource``: of any thread of its
    resource (a Slack channel)."""
    free_args: tuple[str, ...] = ()
    """Arguments that may differ in later calls; every other argument is pinned to its value
    in this call."""


@dataclass(frozen=True, kw_only=True)
class GrantLimits:
    """How far a standing grant of a call may reach (a rule's ``grants``); None: no bound."""

    max_seconds: float | None = None
    """The longest a grant may last."""
    max_uses: int | None = None
    """The most calls one grant may approve."""


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Run the pending call (with ``args`` instead of the model's, when given)."""

    kind: Literal["approve"] = field(default="approve", init=False)
    grant: GrantRequest | None = None
    """Also store a standing grant for later calls like this one (in the same transaction as
    this approval); refused with ``GrantNotAllowed`` (nothing recorded) where the call's rule
    allows no grant, beyond its bounds, for a quorum or confirm rule, or with edited ``args``."""
    args: dict[str, Any] | None = None
    """Edited arguments, validated against the tool's input schema before anything is claimed;
    None runs the call with the arguments it was shown with. Edited arguments are a new
    proposal, gated again under the rules that match THEM: they run at once only when those
    ask no more than the call as shown (no more approvals, no confirm it lacked, approvers that
    include the decider); otherwise the call is presented again with them (a new approval
    chunk, ``edited_from`` the shown arguments, the editor's approval counted when the new rule
    lets them approve) and nothing runs."""


@dataclass(frozen=True, kw_only=True)
class Decline:
    """Do not run the call; the model is told it was declined (with ``reason``) and answers."""

    kind: Literal["decline"] = field(default="decline", init=False)
    reason: str | None = None
    """Why, as the model and the audit log see it."""
    withdrawn: bool = False
    """True: the requester takes back their own call (``decided_by`` must be the call's
    ``requested_by``; every policy allows it, anyone else is refused). The model is told the
    requester withdrew it."""


@dataclass(frozen=True, kw_only=True)
class Resume:
    """Give a call that suspended itself the data it waits for; the tool runs again."""

    kind: Literal["resume"] = field(default="resume", init=False)
    data: Any
    """The resume data, validated against the tool's ``resume_schema`` before the claim."""


EXPIRED_REASON = "expired"
"""The reason the model is given for a call that expired."""

WITHDRAWN_REASON = "the requester withdrew this call"
"""What the model is told about a call its requester withdrew (then their reason, if any)."""


@dataclass(frozen=True, kw_only=True)
class Expire:
    """The call waited too long: it is declined as ``expired`` and never runs."""

    kind: Literal["expire"] = field(default="expire", init=False)


Decision = Approve | Decline | Resume | Expire
"""Any decision ``Agent.decide`` accepts, told apart by ``kind``."""


@dataclass(frozen=True, kw_only=True)
class DecisionRequest:
    """Which pending call a decision is about, and who decides it from where: the one value a
    decision carries through every hop (a button, a modal, a thread reply, the HTTP API) down
    to the claim. ``Agent.decide_request(request, decision)`` takes it.

    Example:
        >>> request = DecisionRequest(run_id=run_id, tool_call_id="c1", decided_by="U1")
        >>> stream = await agent.decide_request(request, Approve())
    """

    run_id: str
    """The run holding the call (for a sub-agent's call: the supervisor's run)."""
    tool_call_id: str | None = None
    """The call to decide (for a sub-agent's call: the supervisor's handle); None: the run's
    most recently suspended call."""
    fingerprint: str | None = None
    """``agents.fingerprint`` of the call as the person saw it; when given it must match the
    pending call (else ``FingerprintMismatch`` and nothing runs)."""
    decided_by: str | None = None
    """Who decides: asked of the decision policy and counted toward a quorum; None: nobody
    named (no policy is asked, a quorum call refuses)."""
    definition_digest: str | None = None
    """``definition_digest`` of the tool as the person saw it (a card carries it); when given
    it must match the pending call's, else ``ToolChanged`` and nothing runs."""
    source: str = "python"
    """How the decision arrived (``button``, ``modal``, ``thread-reply``, ``api``, ...): only
    recorded in the audit log and the metrics."""


@dataclass(frozen=True, kw_only=True)
class TakenDecision:
    """A decision the runtime claimed, with the run it continues: what one edge tells another
    (the HTTP API tells the Slack edge, which shows it on the card and in the thread)."""

    request: DecisionRequest
    """The call, who decided and how (as passed to ``Agent.decide_request``)."""
    decision: Decision
    """What was decided (``Approve`` with its edited ``args``, ``Decline`` with its ``reason``,
    ``Resume`` with its data)."""
    stream: AgentStream
    """The run going on after the decision."""
    batch: Mapping[str, Decision] = field(default_factory=dict)
    """``decide_many``: every call decided together, by ``tool_call_id`` (``request`` names
    the first of them; they share ``stream``); empty for a decision on one call."""


PolicyKind = Literal["approve", "decline", "resume"]
"""What a person asks to do, as a decision policy sees it (expiry is the system's)."""


class PolicyRefusal(Protocol):
    """A refusal as data, which a decision policy may return instead of a sentence: the rule's
    name reaches ``NotAllowedToDecide.rule`` (and so metrics, audit, cards) without anyone
    parsing the text. Any object with these two attributes will do (a frozen dataclass)."""

    @property
    def rule(self) -> str:
        """The refusing rule's name, e.g. ``self-approval``."""
        ...

    @property
    def text(self) -> str:
        """Why not, in words (``NotAllowedToDecide.reason``)."""
        ...


PolicyVerdict = str | PolicyRefusal | None
"""A decision policy's answer: None allows; a sentence or a ``PolicyRefusal`` refuses."""

DecisionPolicy = Callable[
    [PendingToolCall, str | None, PolicyKind], PolicyVerdict | Awaitable[PolicyVerdict]
]
"""``Agent(decision_policy=fn)``: ``fn(call, decided_by, kind)``, sync or async, returns None to
allow, or a sentence or a ``PolicyRefusal`` saying why not (raised as ``NotAllowedToDecide``).
``call`` is the pending call with its ``requested_by``. It runs inside every decision, after the
call is found and before it is claimed; a policy that raises refuses (fail safe).

It is asked when the decision names a person (``decided_by``). A policy object whose
``asks_without_decider`` attribute is True (``ASKS_WITHOUT_DECIDER``) is asked for decisions
without one too, with ``decided_by=None`` meaning "no person" (an HTTP service token, say), so
it can refuse those where a person is required."""

ASKS_WITHOUT_DECIDER = "asks_without_decider"
"""The attribute of a decision policy that asks it about decisions naming no person."""


async def ask_policy(
    policy: DecisionPolicy, call: PendingToolCall, decided_by: str | None, kind: PolicyKind
) -> tuple[str, str] | None:
    """What ``policy`` says: None allows; else the refusing rule's name and why. A sentence is
    rule ``policy``; a policy that raises refuses (fail safe). The runtime asks it this way
    inside the claim, and a host that asks early (a modal not worth opening) does the same."""
    try:
        verdict = policy(call, decided_by, kind)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:
        return POLICY_RULE, f"the decision policy failed ({type(exc).__name__}: {exc})"
    if verdict is None:
        return None
    if isinstance(verdict, str):
        return POLICY_RULE, verdict
    return str(getattr(verdict, "rule", POLICY_RULE)), str(getattr(verdict, "text", verdict))


@dataclass(frozen=True, kw_only=True)
class CallRules:
    """What a host's rules say about one tool call (a policy file's matching rule).

    Returned by a ``CallRulesFn`` (``ServedParts(call_rules=fn)``); the gate (``agents.gate``)
    asks it once when a call is proposed and stores what it says with the call (its
    ``requirement``), and again inside each decision for who may decide under the rule in
    force. Rules only ever add: ``require_approval`` is OR-ed with the tool's own gate, and
    ``approvals`` never lowers the tool's own quorum.
    """

    require_approval: bool = False
    """True: the call waits for approval even if its tool would not (False adds nothing)."""
    approvals: int | None = None
    """Distinct approvers the call needs (the larger of this and the tool's ``approvals``)."""
    ttl_seconds: float | None = None
    """Seconds until the pending approval expires (None: the run's ``approval_ttl_seconds``)."""
    confirm: bool = False
    """Approve asks "are you sure?" first (an edge's dialog). The runtime only compares it: an
    edit whose arguments need a confirm the shown ones did not is presented again."""
    grants: GrantLimits | None = None
    """The standing grants the call allows (a policy rule's ``grants``); None: none, unless
    no rule matched (``matched`` False) and its tool was created with ``grants=True``. Never
    with a quorum or a confirm."""
    matched: bool = True
    """False: no rule of the host's matched the call, and these are its defaults (who may
    approve); then a tool created with ``grants=True`` allows grants of its own."""
    rule: str | None = None
    """The rule's key: stable while the rule says the same (its number and a digest of what it
    says); None: the host names its rules no key. A standing grant is bound to it (SPEC 15)."""
    rule_number: int | None = None
    """The rule's number in its file (1-based), for people."""
    rule_source: str | None = None
    """The file it comes from, for people (``countersign.toml``)."""
    rule_text: str | None = None
    """What the rule says, in words (its description, else its tools and conditions)."""
    approvers: tuple[str, ...] = ()
    """Who may approve under it (users and user groups); empty: anyone. The host's decision
    policy reads them from the call's ``requirement``."""
    allow_self_approval: bool = True
    """Whether a requester may approve their own call under it."""
    max_ttl_seconds: float | None = None
    """How long Extend may keep a call decidable in all (None: ``ttl_seconds``)."""
    escalate: tuple[Escalation, ...] = ()
    """Escalation steps while the call pends (SPEC 15), in increasing ``after_seconds``."""
    free_args: tuple[str, ...] = ()
    """Arguments a grant may let vary by default (the grant modal's defaults)."""


CallRulesFn = Callable[[str, str, tuple[str, ...], dict[str, Any]], CallRules | None]
"""``fn(tool_name, tool_id, agent_path, args)``: the host's rules for a call about to be gated
(``tool_name`` as the model calls it, ``tool_id`` the tool's id (the name itself for a
delegation ``agent-<key>``), ``agent_path`` from the supervisor down to the agent owning the
call). Sync; None adds nothing; a fn that raises means "approval required" (fail safe)."""
