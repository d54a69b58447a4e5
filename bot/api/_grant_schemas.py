"""The wire format of standing grants on ``/api`` (SPEC 15), camelCase like the rest.

A grant is created by approving with one (``ApproveRequest.grant``), listed with
``GET .../grants`` and revoked with ``POST .../revoke-grant``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agents import Grant, GrantRequest

MAX_FREE_ARGS = 50
"""Most argument names a grant may leave free."""
MAX_NAME_LENGTH = 255
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH, pattern=r"^[^\u0000]*$")]


class _Wire(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        use_attribute_docstrings=True,
    )


class _Request(_Wire):
    model_config = ConfigDict(
        alias_generator=to_camel,
        frozen=True,
        extra="forbid",
        validate_by_name=False,
        use_attribute_docstrings=True,
    )


class GrantRequestIn(_Request):
    """``grant`` of an approval: also approve later calls like this one."""

    seconds: float = Field(gt=0, le=366 * 86400)
    """How long the grant lasts (at most the rule's ``grants.max_seconds``, else 403)."""
    max_uses: int = Field(ge=1, le=1_000_000)
    """How many later calls it may approve (at most the rule's ``grants.max_uses``)."""
    within: Literal["thread", "resource"] = "thread"
    """``thread``: calls of this call's thread; ``resource``: of its whole channel."""
    free_args: list[Name] = Field(default_factory=list, max_length=MAX_FREE_ARGS)
    """Arguments that may differ in later calls; all others are pinned."""

    def to_runtime(self) -> GrantRequest:
        return GrantRequest(
            seconds=self.seconds,
            max_uses=self.max_uses,
            within=self.within,
            free_args=tuple(self.free_args),
        )

    @classmethod
    def of(cls, request: GrantRequest) -> dict[str, Any]:
        """The wire JSON of ``request`` (what the client sends)."""
        return {
            "seconds": request.seconds,
            "maxUses": request.max_uses,
            "within": request.within,
            "freeArgs": list(request.free_args),
        }


class GrantsQuery(_Request):
    """Query string of ``GET /api/agents/{agent_id}/grants``."""

    thread_id: Name | None = None
    """Only grants that apply in this thread (with ``resourceId``: its channel's too)."""
    resource_id: Name | None = None
    """Only grants of this resource (channel)."""
    granted_by: Name | None = None
    """Only this person's grants."""


class RevokeGrantRequest(_Request):
    """Body of ``POST /api/agents/{agent_id}/revoke-grant``."""

    grant_id: Name
    """The grant to revoke."""
    revoked_by: Name | None = None
    """Who revokes (the grantor or an approver of its rule); taken as for ``decidedBy``."""


class GrantOut(_Wire):
    """A standing grant (``agents.Grant``)."""

    grant_id: str
    tool_name: str
    agent_path: list[str]
    thread_id: str | None
    resource_id: str | None
    pins: dict[str, Any]
    """The arguments later calls must have, equal."""
    free_args: list[str]
    granted_by: str
    created_at: datetime
    expires_at: datetime
    max_uses: int
    uses: int
    revoked_at: datetime | None = None
    revoked_by: str | None = None
    agent_id: str = ""

    @classmethod
    def of(cls, grant: Grant) -> GrantOut:
        return cls.model_validate(grant, from_attributes=True)

    def to_runtime(self) -> Grant:
        return Grant(**self.model_dump())


class GrantsOut(_Wire):
    """``GET .../grants``: the grants usable now, newest first."""

    grants: list[GrantOut]
