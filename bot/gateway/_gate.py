"""``POST /api/gate`` answered by the gateway: a coding agent's hook asks about one call.

Example:
    >>> add_api_routes(web_app, agents, access, gate=GateAnswers(gateway))  # doctest: +SKIP
"""

from __future__ import annotations

import bot.gateway._messages as msg
from bot.api import GateOut, GateRequest
from bot.gateway._gateway import Answer, Ask, Gateway, Origin


class GateAnswers:
    """The API's ``Gate``: asks the gateway as ``person``, answers in the API's words."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    async def __call__(self, person: str, asked: GateRequest, /) -> GateOut:
        if self._gateway.tools.is_mcp_tool(asked.tool):
            return GateOut(status="declined", reason=msg.HOOK_CLASHES.format(tool=asked.tool))
        answer = await self._gateway.ask(
            Ask(
                person=person,
                tool=asked.tool,
                args=dict(asked.args),
                origin=Origin(
                    kind="hook",
                    client=asked.client,
                    session=asked.session,
                    client_call_id=asked.call_id,
                    cwd=asked.cwd,
                ),
                wait_seconds=asked.wait_seconds,
            )
        )
        return gate_out(answer)


def gate_out(answer: Answer) -> GateOut:
    """The wire answer of a hook call (a hook call's tool never fails: it runs in the client)."""
    ref = answer.ref
    ids = {"run_id": ref.run_id, "call_id": ref.tool_call_id} if ref is not None else {}
    if answer.status == "pending":
        return GateOut(status="pending", card=answer.card, **ids)
    if answer.status == "declined":
        return GateOut(
            status="declined",
            decided_by=answer.decided_by,
            reason=answer.reason,
            card=answer.card,
            **ids,
        )
    if answer.status == "expired":
        return GateOut(status="expired", card=answer.card, **ids)
    if answer.status == "approved":
        return GateOut(status="approved", decided_by=answer.decided_by, card=answer.card, **ids)
    if answer.status == "failed":  # the gate itself could not answer: never a silent allow
        return GateOut(status="declined", reason=msg.FAILED.format(error=answer.error), **ids)
    return GateOut(status="allowed", **ids)
