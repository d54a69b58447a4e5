"""``Client``: the Python client of countersign's HTTP API (SPEC 7).

The token says who decides: a per-person token (``API_TOKENS``) decides as its user, the
service token (``API_TOKEN``) as no person unless the server sets ``API_TOKEN_ACTS_FOR_USERS``
(then ``decided_by`` is the decider).

Errors come back as the runtime's own classes (``agents.errors``: ``AlreadyDecided`` with
``decided_by``/``decided_at``/``decision``, ``DuplicateApproval``, ``NotAllowedToDecide`` with
its ``rule``, ``FingerprintMismatch``, ``InvalidResumeData`` …, any class by its code), so code
written against ``Agent`` handles them the same way. Errors only the HTTP edge has
are ``ApiError`` subclasses (a ``bot.BotError``): ``ApiAuthError`` (401), ``AgentNotFound``
and ``ApiRequestError`` (400).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote

import aiohttp

from agents import Approve, Decline, Grant, GrantRequest, PendingToolCall, Resume, SuspendedRunsPage
from bot._client_results import Decision, ManyDecisions
from bot.api import (
    PENDING_CALL_NOT_FOUND,
    AgentNotFound,
    ApiAuthError,
    ApiError,
    ApiRequestError,
    DecideManyOut,
    DecisionOut,
    GrantOut,
    GrantRequestIn,
    GrantsOut,
    SuspendedRunsPageOut,
    error_from,
)

__all__ = [
    "AgentClient",
    "AgentNotFound",
    "ApiAuthError",
    "ApiError",
    "ApiRequestError",
    "Client",
    "Decision",
    "ManyDecisions",
]


class Client:
    """Talks to a countersign server's ``/api``.

    Use it as an async context manager (or call ``close()``); it closes only a session it
    created itself.

    Example:
        >>> my_token = os.environ["MY_COUNTERSIGN_TOKEN"]  # mine, from API_TOKENS: I decide
        >>> async with Client("http://127.0.0.1:3000", token=my_token) as api:
        ...     ops = api.agent("ops")
        ...     page = await ops.list_suspended_runs(thread_id="slack:T1:C1:1700000000.000100")
        ...     for run in page.runs:
        ...         for call in run.tool_calls:
        ...             await ops.approve_tool_call(
        ...                 run_id=run.run_id, tool_call_id=call.tool_call_id,
        ...                 fingerprint=call.fingerprint)
        ... # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        session: aiohttp.ClientSession | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        """The server's root URL (``/api`` is appended)."""
        self._token = token
        self._session = session
        self._owns_session = session is None
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    def agent(self, agent_id: str) -> AgentClient:
        """The API of one served agent."""
        return AgentClient(self, agent_id)

    async def decide_many(
        self,
        agent_id: str,
        *,
        run_id: str,
        decisions: Mapping[str, Approve | Decline],
        decided_by: str | None = None,
        fingerprints: Mapping[str, str] | None = None,
        wait: bool = False,
    ) -> ManyDecisions:
        """``Agent.decide_many`` over HTTP: ``agent(agent_id).decide_many(...)``."""
        return await self.agent(agent_id).decide_many(
            run_id=run_id,
            decisions=decisions,
            decided_by=decided_by,
            fingerprints=fingerprints,
            wait=wait,
        )

    async def openapi(self) -> dict[str, Any]:
        """The server's OpenAPI description."""
        body = await self._request("GET", "/api/openapi.json")
        return body if isinstance(body, dict) else {}

    async def close(self) -> None:
        """Close the HTTP session if this client created it."""
        if self._owns_session and self._session is not None:
            await self._session.close()
        self._session = None

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Any:
        if self._session is None:
            if not self._owns_session:
                raise RuntimeError("the client was closed")
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        async with self._session.request(
            method,
            self.base_url + path,
            params=params,
            json=body,
            headers={"Authorization": f"Bearer {self._token}", "Accept": "application/json"},
        ) as response:
            try:
                data = await response.json(content_type=None)
            except ValueError:
                data = None
            if response.status >= 400:
                raise error_from(response.status, data)
            return data


class AgentClient:
    """List and decide one agent's pending tool calls; mirrors ``Agent``'s methods."""

    def __init__(self, client: Client, agent_id: str) -> None:
        self.client = client
        """The client this goes through."""
        self.agent_id = agent_id
        """The served agent's id."""

    def _path(self, tail: str) -> str:
        return f"/api/agents/{quote(self.agent_id, safe='')}/{tail}"

    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int | None = None,
        per_page: int | None = None,
    ) -> SuspendedRunsPage:
        """Runs waiting for decisions, newest first (``page`` from 0), with ``.total``."""
        params = {
            key: str(value)
            for key, value in (
                ("threadId", thread_id),
                ("resourceId", resource_id),
                ("page", page),
                ("perPage", per_page),
            )
            if value is not None
        }
        data = await self.client._request("GET", self._path("suspended-runs"), params=params)
        return SuspendedRunsPageOut.model_validate(data).to_runtime()

    async def pending_call(self, *, run_id: str, tool_call_id: str) -> PendingToolCall | None:
        """That pending call (``Agent.pending_call``), or None when it is not pending."""
        path = self._path(f"pending-calls/{quote(run_id, safe='')}/{quote(tool_call_id, safe='')}")
        try:
            data = await self.client._request("GET", path)
        except ApiError as error:
            if error.code == PENDING_CALL_NOT_FOUND:
                return None
            raise
        return PendingToolCall.model_validate(data)

    async def approve_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str,
        args: dict[str, Any] | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        wait: bool = False,
        grant: GrantRequest | None = None,
    ) -> Decision:
        """Approve a pending call (with edited ``args`` when given; with ``grant``: also
        approve later calls like it, SPEC 15); claimed before returning."""
        return await self._decide(
            Approve(args=args, grant=grant),
            run_id=run_id,
            tool_call_id=tool_call_id,
            fingerprint=fingerprint,
            decided_by=decided_by,
            wait=wait,
        )

    async def decline_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str,
        reason: str | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        wait: bool = False,
    ) -> Decision:
        """Decline a pending call: it never runs; the model is told, with ``reason``."""
        return await self._decide(
            Decline(reason=reason),
            run_id=run_id,
            tool_call_id=tool_call_id,
            fingerprint=fingerprint,
            decided_by=decided_by,
            wait=wait,
        )

    async def resume(
        self,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str,
        decided_by: str | None = None,
        wait: bool = False,
    ) -> Decision:
        """Give a suspended call the data it asked for (``InvalidResumeData`` when invalid)."""
        return await self._decide(
            Resume(data=resume_data),
            run_id=run_id,
            tool_call_id=tool_call_id,
            decided_by=decided_by,
            wait=wait,
        )

    async def decide_many(
        self,
        *,
        run_id: str,
        decisions: Mapping[str, Approve | Decline],
        decided_by: str | None = None,
        fingerprints: Mapping[str, str] | None = None,
        wait: bool = False,
    ) -> ManyDecisions:
        """Decide several pending calls of one run in one transaction, all or nothing
        (``POST .../decide-many``); a refusal is raised as the runtime's error naming the
        call (``.tool_call_id``), and then nothing was recorded.

        Example:
            >>> await ops.decide_many(run_id=rid, decisions={"c1": Approve(), "c2": Decline()})
            ... # doctest: +SKIP
        """
        prints = fingerprints or {}
        entries = []
        for tool_call_id, decision in decisions.items():
            entry: dict[str, Any] = {"toolCallId": tool_call_id, "decision": decision.kind}
            if isinstance(decision, Decline):
                entry |= _present(reason=decision.reason)
            entries.append(entry | _present(fingerprint=prints.get(tool_call_id)))
        body = {"runId": run_id, "decisions": entries} | _present(decidedBy=decided_by)
        params = {"wait": "true"} if wait else None
        data = await self.client._request(
            "POST", self._path("decide-many"), params=params, body=body
        )
        out = DecideManyOut.model_validate(data)
        return ManyDecisions(
            run_id=out.run_id,
            tool_call_ids=out.tool_call_ids,
            status=out.status,
            text=out.text,
            finish_reason=out.finish_reason,
            pending=None if out.pending is None else list(out.pending),
            error=out.error,
        )

    async def list_grants(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        granted_by: str | None = None,
    ) -> list[Grant]:
        """The agent's standing grants usable now (``Agent.list_grants``), newest first."""
        params = _present(threadId=thread_id, resourceId=resource_id, grantedBy=granted_by)
        data = await self.client._request("GET", self._path("grants"), params=params)
        return [g.to_runtime() for g in GrantsOut.model_validate(data).grants]

    async def revoke_grant(self, grant_id: str, *, revoked_by: str | None = None) -> Grant:
        """Revoke a standing grant (``Agent.revoke_grant``); ``GrantNotAllowed`` unless the
        token's person (or ``revoked_by``, as for ``decided_by``) is its grantor or an
        approver of its rule."""
        body = {"grantId": grant_id, **_present(revokedBy=revoked_by)}
        data = await self.client._request("POST", self._path("revoke-grant"), body=body)
        return GrantOut.model_validate(data).to_runtime()

    async def _decide(
        self,
        decision: Approve | Decline | Resume,
        *,
        run_id: str,
        tool_call_id: str,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        wait: bool,
    ) -> Decision:
        """POST ``decision`` to its route (``Agent.decide``'s HTTP twin)."""
        body: dict[str, Any] = {"runId": run_id, "toolCallId": tool_call_id}
        if decision.kind == "approve":
            tail = "approve-tool-call"
            body |= _present(args=decision.args, fingerprint=fingerprint)
            if decision.grant is not None:
                body["grant"] = GrantRequestIn.of(decision.grant)
        elif decision.kind == "decline":
            tail = "decline-tool-call"
            body |= _present(reason=decision.reason, fingerprint=fingerprint)
            if decision.withdrawn:
                body["withdrawn"] = True
        else:
            tail = "resume"
            body["resumeData"] = decision.data
        body |= _present(decidedBy=decided_by)
        params = {"wait": "true"} if wait else None
        data = await self.client._request("POST", self._path(tail), params=params, body=body)
        out = DecisionOut.model_validate(data)
        return Decision(
            run_id=out.run_id,
            tool_call_id=out.tool_call_id,
            status=out.status,
            text=out.text,
            finish_reason=out.finish_reason,
            pending=None if out.pending is None else list(out.pending),
            error=out.error,
        )


def _present(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}
