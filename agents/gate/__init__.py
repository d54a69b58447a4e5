"""The one gate: what a call needs (gated or not, which rule, approvers, quorum, confirm, TTL,
escalation, whether a grant may approve it) and who may decide it, answered in one place for
every path that proposes or decides a call (SPEC 3.3 "One gate").

Below the run loop: the loop asks ``propose`` for each call the model makes (and
``usable_grant`` for a standing grant that approves it); every decision (``decide``,
``decide_many``, recovery, the HTTP API, every Slack surface, the gateway) is a ``Case`` that
``judge`` passes through the judgement gates and ``record`` writes; an edge that only wants to
know asks ``ask``. The chains are in ``_chain``, one gate per module:

    propose:  tool's own rule → run's rule → host's rule → definition → grant limits
    judge:    expiry → who may decide → quorum approver → definition → grant → edits → quorum
"""

from agents.gate._asking import case_of
from agents.gate._chain import JUDGEMENT_GATES, PROPOSAL_GATES, ask, judge, propose
from agents.gate._claims import (
    CLAIMED_AS,
    claim,
    claim_retry,
    decided_claim,
    decided_event,
    leased_claim,
    report_decision,
)
from agents.gate._found import Found, Kind, already_decided, find, found_in
from agents.gate._judgement import Case, Verdict, verdict_of
from agents.gate._proposal import Needs, Proposal
from agents.gate._recording import Recorded, discount, record
from agents.gate.gates._authority import may_decide
from agents.gate.gates._edits import validated_args
from agents.gate.gates._escalation import escalate_call
from agents.gate.gates._expiry import not_expired
from agents.gate.gates._grant_use import GRANT_SOURCE, Granted, told_granted, usable_grant
from agents.gate.gates._grants import (
    MAX_GRANT_SECONDS,
    MAX_GRANT_USES,
    grant_bounds_problem,
    pinned,
)
from agents.gate.gates._host_rule import in_force, owner_of
from agents.gate.gates._quorum import count

__all__ = [
    "CLAIMED_AS",
    "GRANT_SOURCE",
    "JUDGEMENT_GATES",
    "MAX_GRANT_SECONDS",
    "MAX_GRANT_USES",
    "PROPOSAL_GATES",
    "Case",
    "Found",
    "Granted",
    "Kind",
    "Needs",
    "Proposal",
    "Recorded",
    "Verdict",
    "already_decided",
    "ask",
    "case_of",
    "claim",
    "claim_retry",
    "count",
    "decided_claim",
    "decided_event",
    "discount",
    "escalate_call",
    "find",
    "found_in",
    "grant_bounds_problem",
    "in_force",
    "judge",
    "leased_claim",
    "may_decide",
    "not_expired",
    "owner_of",
    "pinned",
    "propose",
    "record",
    "report_decision",
    "told_granted",
    "usable_grant",
    "validated_args",
    "verdict_of",
]
