"""``Agent``'s deciding half: decisions, their shorthands, finding pending calls, retries.

``Agent`` inherits it; every method hands the agent's ``Runtime`` to a helper of this package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agents._results import Grant, PendingToolCall, RunResult, SuspendedRun, SuspendedRunsPage
from agents._runtime import Runtime
from agents.deciding._decide import decide, retry
from agents.deciding._listing import (
    list_due_runs,
    list_suspended_runs,
    pending_call,
    send_tool_approval,
)
from agents.deciding._many import ManyRequest, decide_many
from agents.deciding._standing import count_grants, list_grants, revoke_grant
from agents.decisions import Approve, Decision, DecisionRequest, Decline, Resume
from agents.gate import Verdict, ask, case_of, escalate_call
from agents.running._stream import AgentStream
from storage import DueKey


class DecisionMethods:
    """Deciding pending calls of an agent (mixed into ``Agent``)."""

    _runtime: Runtime

    async def decide(
        self,
        decision: Decision,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Decide a pending call; the run continues in the background on the returned stream.

        The call is found (``tool_call_id`` None: the most recently suspended one), the
        decision validated (edited args, resume data), then atomically claimed and audited
        before this returns, so every refusal (``SnapshotNotFound``, ``ToolCallNotSuspended``,
        ``FingerprintMismatch``, ``ToolChanged``, ``InvalidToolArgs``, ``InvalidResumeData``,
        ``NotAllowedToDecide``, ``AlreadyDecided``/``ApprovalExpired``) is raised here.
        ``Decline(withdrawn=True)`` is the requester taking back their own call. ``source``
        (button, API, expiry...) is only recorded in the audit log.

        Example:
            >>> from agents import Approve, Decline, Expire, Resume
            >>> stream = await agent.decide(Approve(), run_id=result.run_id, decided_by="U1")
            >>> (await stream.result()).text
        """
        request = DecisionRequest(
            run_id=run_id,
            tool_call_id=tool_call_id,
            fingerprint=fingerprint,
            decided_by=decided_by,
            source=source,
        )
        return await decide(self._runtime, request, decision)

    async def decide_request(self, request: DecisionRequest, decision: Decision) -> AgentStream:
        """``decide``, with the call and the decider as one ``DecisionRequest`` (what the
        edges carry from a click, a modal, a thread reply or the HTTP API to the claim).

        Example:
            >>> from agents import Approve, DecisionRequest
            >>> request = DecisionRequest(run_id=rid, tool_call_id="c1", decided_by="U1")
            >>> stream = await agent.decide_request(request, Approve())
        """
        return await decide(self._runtime, request, decision)

    async def decide_many(
        self,
        *,
        run_id: str,
        decisions: Mapping[str, Approve | Decline],
        decided_by: str | None = None,
        fingerprints: Mapping[str, str] | None = None,
        definition_digests: Mapping[str, str] | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Decide several pending calls of one run in ONE storage transaction, all or nothing.

        ``decisions`` maps each ``tool_call_id`` to ``Approve()`` or ``Decline(reason=...)``;
        ``fingerprints`` / ``definition_digests`` (optional, per call) must match what is
        pending. When any call is refused (``AlreadyDecided``, ``ApprovalExpired``,
        ``NotAllowedToDecide``, ``FingerprintMismatch``, ``ToolChanged``, ``DuplicateApproval``)
        the error names that call and nothing at all is recorded. Each approval counts toward
        its own call's quorum (a quorum call gets one approval and keeps pending); the run goes
        on, on the returned stream, once every call of its step is resolved.

        Example:
            >>> from agents import Approve, Decline
            >>> stream = await agent.decide_many(
            ...     run_id=rid, decisions={"c1": Approve(), "c2": Decline(reason="no")},
            ...     decided_by="U1")
        """
        request = ManyRequest(
            run_id=run_id,
            decisions=dict(decisions),
            decided_by=decided_by,
            fingerprints=dict(fingerprints or {}),
            definition_digests=dict(definition_digests or {}),
            source=source,
        )
        return await decide_many(self._runtime, request)

    async def ask(
        self,
        decision: Decision,
        *,
        call: PendingToolCall,
        run_id: str,
        decided_by: str | None,
        source: str = "python",
    ) -> Verdict:
        """May ``decided_by`` take ``decision`` on ``call`` (as the caller holds it, from a
        listing, ``pending_call`` or an approval chunk), and what would it do? The gate's
        answer, with nothing written: ``Verdict.refused`` is the error the decision would
        raise (``NotAllowedToDecide`` with its ``rule``, ``ApprovalExpired``, …), else
        ``effect`` is ``claims`` (it would run or be declined), ``counts`` (one approval of a
        quorum) or ``presents`` (edited arguments needing more). The decision itself is judged
        again, from storage, when it is taken. Edges ask this before opening a form and to
        list what a person may decide; they never check a rule themselves.

        Example:
            >>> verdict = await agent.ask(Approve(), call=call, run_id=rid, decided_by="U2")
            >>> verdict.allowed, verdict.effect
            (True, 'claims')
        """
        request = DecisionRequest(
            run_id=run_id, tool_call_id=call.tool_call_id, decided_by=decided_by, source=source
        )
        return await ask(case_of(self._runtime, call, decision, request))

    async def pending_call(self, *, run_id: str, tool_call_id: str) -> PendingToolCall | None:
        """The call ``tool_call_id`` of ``run_id`` while it waits for a person, else None
        (decided, finished, or never seen), in one storage read. A sub-agent's call
        is found by the handle it is decided with: the supervisor's run id and tool call id.

        Example:
            >>> call = await agent.pending_call(run_id=rid, tool_call_id="c1")
            >>> call.definition_digest == agent.tool_for(call).definition_digest
            True
        """
        return await pending_call(self._runtime, run_id=run_id, tool_call_id=tool_call_id)

    async def escalate_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str,
        step: int,
        approvers: Sequence[str] = (),
        notify: Sequence[str] = (),
        at: datetime,
    ) -> PendingToolCall | None:
        """Record escalation ``step`` (1 for the first) of a pending approval nobody decided
        (SPEC 15): ``approvers`` may approve that call from now on (the decision policy sees
        them as its ``escalated_approvers``), ``notify`` is who was told; audited as
        ``escalated``. Once across processes: the call as it now stands when this call recorded
        the step, None when it was recorded already or the call no longer waits. The model is
        not called.

        Example:
            >>> call = await agent.escalate_tool_call(
            ...     run_id=rid, tool_call_id="c1", step=1, approvers=["S0LEADS"], at=utcnow()
            ... )
            >>> call.escalated_approvers
            ['S0LEADS']
        """
        return await escalate_call(
            self._runtime,
            run_id=run_id,
            tool_call_id=tool_call_id,
            step=step,
            approvers=approvers,
            notify=notify,
            at=at,
        )

    async def approve_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        args: dict[str, Any] | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Approve a pending call (``args``: with edited arguments); ``decide(Approve(...))``.

        Edited arguments that need more than the call as shown (see ``Approve.args``) run
        nothing: the returned stream announces the edited call (a ``tool-call-approval`` chunk)
        and finishes ``suspended``. A tool whose definition changed since the call was shown
        raises ``ToolChanged`` (the call was presented again).

        Example:
            >>> stream = await agent.approve_tool_call(run_id=result.run_id)
            >>> (await stream.result()).text
        """
        return await self.decide(
            Approve(args=args),
            run_id=run_id,
            tool_call_id=tool_call_id,
            fingerprint=fingerprint,
            decided_by=decided_by,
            source=source,
        )

    async def decline_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        reason: str | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Decline a pending call: it never runs; the model is told (with ``reason``) and answers.

        Example:
            >>> stream = await agent.decline_tool_call(run_id=r.run_id, reason="no")
        """
        return await self.decide(
            Decline(reason=reason),
            run_id=run_id,
            tool_call_id=tool_call_id,
            fingerprint=fingerprint,
            decided_by=decided_by,
            source=source,
        )

    async def resume_stream(
        self,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Resume a call that suspended itself; the tool runs again with ``ctx.resume_data``.

        Example:
            >>> stream = await agent.resume_stream({"priority": "high"}, run_id=rid)
        """
        return await self.decide(
            Resume(data=resume_data),
            run_id=run_id,
            tool_call_id=tool_call_id,
            decided_by=decided_by,
            source=source,
        )

    async def approve_tool_call_generate(self, **kwargs: Any) -> RunResult:
        """``approve_tool_call`` and wait for the run's result."""
        return await finished(await self.approve_tool_call(**kwargs))

    async def decline_tool_call_generate(self, **kwargs: Any) -> RunResult:
        """``decline_tool_call`` and wait for the run's result."""
        return await finished(await self.decline_tool_call(**kwargs))

    async def resume_generate(self, resume_data: Any, **kwargs: Any) -> RunResult:
        """``resume_stream`` and wait for the run's result."""
        return await finished(await self.resume_stream(resume_data, **kwargs))

    async def send_tool_approval(
        self,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool = True,
        tool_call_id: str | None = None,
        reason: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Decide the pending approval of a thread without knowing its run id."""
        return await send_tool_approval(
            self._runtime,
            thread_id=thread_id,
            resource_id=resource_id,
            approved=approved,
            tool_call_id=tool_call_id,
            reason=reason,
            decided_by=decided_by,
            source=source,
        )

    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int | None = None,
        per_page: int | None = None,
    ) -> SuspendedRunsPage:
        """Runs of this agent waiting for decisions (newest first), with their pending calls."""
        return await list_suspended_runs(
            self._runtime,
            thread_id=thread_id,
            resource_id=resource_id,
            page=page,
            per_page=per_page,
        )

    async def list_due_runs(
        self, *, until: datetime, after: DueKey | None = None, limit: int = 100
    ) -> list[SuspendedRun]:
        """Runs of this agent with something due by ``until`` (an expiry, a reminder, an
        escalation step: ``agents.next_due``), by ``(due_at, run_id)``: the first ``limit``
        after the key ``after``. Read from storage's due index: a run not due is never read."""
        return await list_due_runs(self._runtime, until=until, after=after, limit=limit)

    async def reschedule_run(self, *, run_id: str, version: int, due_at: datetime | None) -> bool:
        """Store when ``run_id`` is next due (after the sweep handled it) unless it was saved
        again since ``version`` (that save stored its own); True when stored."""
        return await self._runtime.storage.reschedule(run_id, version=version, due_at=due_at)

    async def retry_run(self, *, run_id: str, decided_by: str | None = None) -> AgentStream:
        """Go on with a run that stopped on an error (``finish_reason == "error"``).

        Nothing already stored is lost: the run continues from its stored messages and tool
        results (tools that ran are not run again). A retry is single-use like a decision.

        Example:
            >>> stream = await agent.retry_run(run_id=failed.run_id)
        """
        return await retry(self._runtime, run_id=run_id, decided_by=decided_by)

    async def list_grants(
        self,
        thread_id: str | None = None,
        resource_id: str | None = None,
        granted_by: str | None = None,
        *,
        active_only: bool = True,
    ) -> list[Grant]:
        """This agent's standing grants usable now, newest first (SPEC 15); with ``thread_id``
        and ``resource_id`` those that apply in that thread; ``active_only=False`` lists
        revoked, expired and used-up ones too.

        Example:
            >>> mine = await agent.list_grants(granted_by="U024BE7LH")
        """
        return await list_grants(
            self._runtime,
            thread_id=thread_id,
            resource_id=resource_id,
            granted_by=granted_by,
            active_only=active_only,
        )

    async def count_grants(self) -> int:
        """How many of this agent's standing grants are usable now, counted by storage
        without loading them (the metrics' ``countersign_grants_active``)."""
        return await count_grants(self._runtime)

    async def revoke_grant(self, grant_id: str, *, revoked_by: str | None = None) -> Grant:
        """Revoke a standing grant at once, for every process: it approves nothing more.

        Its grantor may, and anyone the decision policy lets approve the calls it pins (an
        approver of its rule); anyone else gets ``GrantNotAllowed``, as does an unknown id.

        Example:
            >>> grant = await agent.revoke_grant(grant_id, revoked_by="U024BE7LH")
        """
        return await revoke_grant(self._runtime, grant_id, revoked_by=revoked_by)


async def finished(stream: AgentStream) -> RunResult:
    """The run's result; the error that ended it is raised instead of returned."""
    result = await stream.result()
    if result.finish_reason == "error" and result.error is not None:
        raise result.error
    return result
