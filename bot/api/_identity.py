"""Who an ``/api`` request decides as: authenticated by its bearer token, never asserted.

- A per-person token (``API_TOKENS``: ``[[tokens]]`` with ``user`` and the token's ``sha256``)
  decides as its user: ``decidedBy`` may be left out, and any other value is refused (403
  ``APPROVAL_NOT_ALLOWED``, rule ``other-person``).
- The service token (``API_TOKEN``) decides as no person: ``decidedBy`` is not taken as the
  decider, and the decision policy refuses it where a person is needed (a quorum's approval,
  a call only named approvers decide: rule ``needs-person``, inside the claim). With
  ``API_TOKEN_ACTS_FOR_USERS=true`` the service signs its users in itself and its
  ``decidedBy`` is the decider.

Tokens are compared as SHA-256 digests with ``hmac.compare_digest``, against every known token
(no early exit), so neither a token nor which entry matched leaks through timing.

Example:
    >>> access = ApiAccess.service("s3cret")
    >>> access.caller("s3cret")
    Caller(user=None, acts_for_users=False)
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from agents.errors import NotAllowedToDecide
from bot._settings import Settings

OTHER_PERSON = "other-person"
"""``NotAllowedToDecide.rule`` when a person's token names someone else (``RefusalRule``)."""
OTHER_PERSON_TEXT = (
    "this token is {user}'s: it decides as {user} only (leave decidedBy out, or send {user})"
)


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who sent a request, as its token says."""

    user: str | None = None
    """The person a per-person token decides as; None: the service token."""
    acts_for_users: bool = False
    """The service token's ``decidedBy`` is taken as the decider."""

    def decider(self, decided_by: str | None, run_id: str, tool_call_id: str) -> str | None:
        """Who decides (None: no person); ``NotAllowedToDecide`` when a person's token names
        someone else."""
        if self.user is not None:
            if decided_by not in (None, self.user):
                raise NotAllowedToDecide(
                    run_id,
                    tool_call_id,
                    decided_by=decided_by,
                    reason=OTHER_PERSON_TEXT.format(user=self.user),
                    rule=OTHER_PERSON,
                )
            return self.user
        return decided_by if self.acts_for_users else None


@dataclass(frozen=True, kw_only=True)
class ApiAccess:
    """The tokens ``/api`` accepts, as SHA-256 digests."""

    service_sha256: str | None = None
    """The service token's digest (``API_TOKEN``); None: no service token."""
    acts_for_users: bool = False
    """``API_TOKEN_ACTS_FOR_USERS``."""
    people: tuple[tuple[str, str], ...] = ()
    """``(sha256, user)`` per person's token (``API_TOKENS``)."""

    @classmethod
    def service(cls, token: str, *, acts_for_users: bool = False) -> ApiAccess:
        """Only a service token."""
        return cls(service_sha256=_digest(token), acts_for_users=acts_for_users)

    @classmethod
    def of(cls, settings: Settings) -> ApiAccess | None:
        """What the settings allow; None when neither ``API_TOKEN`` nor ``API_TOKENS`` is set
        (the API is off)."""
        service = settings.api_token
        if service is None and not settings.api_people:
            return None
        return cls(
            service_sha256=None if service is None else _digest(service.get_secret_value()),
            acts_for_users=settings.api_token_acts_for_users,
            people=tuple((entry.sha256, entry.user) for entry in settings.api_people),
        )

    def caller(self, token: str) -> Caller | None:
        """Who ``token`` is (None: no token we know)."""
        given = _digest(token)
        found: Caller | None = None
        for digest, user in self.people:
            if hmac.compare_digest(given, digest):
                found = Caller(user=user)
        if self.service_sha256 is not None and hmac.compare_digest(given, self.service_sha256):
            found = Caller(acts_for_users=self.acts_for_users)
        return found


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()
