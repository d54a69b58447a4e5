"""The values of the policy file's keys that need more than a pydantic type (SPEC 11, 15):
TTL and quorum ranges, finite ``args_above`` limits, ``grants``, ``escalate`` steps and their
durations. Each refuses what can never work with one sentence (a ``policy`` error that
``bot.policy._file`` prints as it is).

Example:
    >>> show_duration(EscalationStep(after="15m", notify=("S0ONCALL",)).after)
    '15m'
"""

from __future__ import annotations

import itertools
import math
from datetime import timedelta
from typing import Annotated, Self

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictInt,
    StringConstraints,
    model_validator,
)
from pydantic.dataclasses import dataclass
from pydantic_core import PydanticCustomError

from storage.__main__ import parse_duration

TTL_MIN_SECONDS = 60
"""The shortest ``ttl_seconds`` (and ``APPROVAL_TTL_SECONDS``): a minute."""
TTL_MAX_SECONDS = 30 * 86400
"""The longest ``ttl_seconds`` (and ``APPROVAL_TTL_SECONDS``): 30 days."""
TTL_DEFAULT_SECONDS = 86400
"""``APPROVAL_TTL_SECONDS`` when neither it nor the policy file says: a day."""
APPROVALS_MAX = 10
"""The largest quorum a rule may ask for."""

ApproverId = Annotated[str, StringConstraints(pattern=r"^[UWS][A-Z0-9]+$")]
"""A Slack user (U…/W…) or user-group (S…) id."""
TtlSeconds = Annotated[StrictInt, Field(ge=TTL_MIN_SECONDS, le=TTL_MAX_SECONDS)]
"""Seconds until a pending approval expires."""
Positive = Annotated[StrictInt, Field(ge=1)]
"""A whole number above zero."""


def _finite_number(value: object) -> int | float:
    """An ``args_above`` limit: an integer or a finite float (not a bool, NaN or inf)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("policy", "must be a number, got {given}", {"given": repr(value)})
    if isinstance(value, float) and not math.isfinite(value):  # an int is finite
        raise PydanticCustomError(
            "policy", "must be a finite number, got {given}", {"given": value}
        )
    return value


Limit = Annotated[int | float, PlainValidator(_finite_number)]
"""A finite number an argument must be above."""

_HELP = "a whole number followed by s, m, h or d (90s, 15m, 12h, 30d)"


def _duration(value: object) -> timedelta:
    """``"15m"`` → 15 minutes, with the parser of ``python -m storage prune --older-than`` (a
    ``timedelta`` given in code is taken as it is); never zero or less."""
    if isinstance(value, timedelta):
        after = value
    else:
        try:
            if not isinstance(value, str):
                raise ValueError(value)
            after = parse_duration(value)
        except ValueError:
            raise PydanticCustomError(
                "policy",
                "must be a duration: {help}, got {given}",
                {"help": _HELP, "given": repr(value)},
            ) from None
    if after <= timedelta(0):
        raise PydanticCustomError("policy", "must be after 0s, got {given}", {"given": repr(value)})
    return after


def show_duration(after: timedelta) -> str:
    """``timedelta(minutes=15)`` → ``"15m"``: the largest unit that writes it whole."""
    seconds = int(after.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


_STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, kw_only=True, config=_STRICT)
class Grants:
    """A rule's ``grants = { max_seconds, max_uses }``: the standing grants its calls allow
    (SPEC 15); a rule without it allows none."""

    max_seconds: Positive
    """The longest a grant for this rule may last, in seconds."""
    max_uses: Positive
    """The most calls one grant may approve."""
    free_args: tuple[Annotated[str, StringConstraints(min_length=1, max_length=100)], ...] = ()
    """Arguments the grant modal lets vary by default (e.g. ``["record_id"]``: a grant on
    ``delete-record`` then approves deleting other records too); the others stay pinned."""


@dataclass(frozen=True, kw_only=True, config=_STRICT)
class EscalationStep:
    """One ``escalate`` step: what happens when nobody has decided a call ``after`` it was
    proposed (SPEC 15), e.g. ``{ after = "15m", notify = ["S0ONCALL"] }``."""

    after: Annotated[timedelta, BeforeValidator(_duration)]
    """How long after the call was proposed (written ``90s``, ``15m``, ``12h``, ``30d``)."""
    notify: tuple[ApproverId, ...] = ()
    """Users and user groups mentioned in the call's thread."""
    approvers: tuple[ApproverId, ...] = ()
    """Users and user groups who may approve the call from then on (added to the rule's)."""

    @model_validator(mode="after")
    def _someone(self) -> Self:
        if not self.notify and not self.approvers:
            raise PydanticCustomError("policy", "give notify or approvers (or both)")
        return self


def increasing(steps: tuple[EscalationStep, ...]) -> tuple[EscalationStep, ...]:
    """``steps`` when each comes strictly after the one before it (a rule's ``escalate``)."""
    for earlier, later in itertools.pairwise(steps):
        if later.after <= earlier.after:
            raise PydanticCustomError(
                "policy",
                "steps must come in strictly increasing after, got {first} then {then}",
                {"first": show_duration(earlier.after), "then": show_duration(later.after)},
            )
    return steps
