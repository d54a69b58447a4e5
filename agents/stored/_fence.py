"""``StreamFence``: the leases a run's stream was produced under, for whoever announces it.

A takeover is final in storage (SPEC 3.4): a write on behalf of an owner whose lease epoch is no
longer current is refused. What the stream announced must be fenced the same way where it
leaves the process: an edge (the Slack bot) asks ``current()`` right before each write it makes
for the stream, and drops the write once another instance took the work over. The ``Run`` names
each lease it works under (a decided call's claim, the continuation claim of the answer, a
grant's claim) before the chunks of that work are emitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage import Storage


@dataclass(frozen=True, kw_only=True)
class HeldLease:
    """One claim a stream's work ran under, as its owner held it."""

    run_id: str
    """The run of the claim."""
    key: str
    """The claim key (``<tool_call_id>#<round>``, ``continue#<step>``)."""
    owner: str | None
    """The instance holding it (None: a claim from before owners; not fenced)."""
    epoch: int
    """The lease epoch it held; a takeover raises it."""


class StreamFence:
    """The leases named so far, and whether every one of them is still its holder's."""

    def __init__(self) -> None:
        self._held: list[tuple[Storage, HeldLease]] = []

    @property
    def leases(self) -> tuple[HeldLease, ...]:
        """Every lease named so far, in order."""
        return tuple(lease for _, lease in self._held)

    def hold(self, storage: Storage, lease: HeldLease) -> None:
        """Name ``lease`` (kept in ``storage``) as one the stream's work runs under."""
        if lease.owner is not None and all(held != lease for _, held in self._held):
            self._held.append((storage, lease))

    async def current(self) -> bool:
        """False once any named lease was taken over (its claim's epoch or owner moved on);
        True while none was, or none is named. One storage read per run of the leases; an
        unreachable storage raises (nothing is announced that cannot be checked)."""
        runs: dict[tuple[int, str], tuple[Storage, list[HeldLease]]] = {}
        for storage, lease in self._held:
            runs.setdefault((id(storage), lease.run_id), (storage, []))[1].append(lease)
        for (_, run_id), (storage, leases) in runs.items():
            claims = {c.key: c for c in await storage.list_claims(run_id)}
            for lease in leases:
                claim = claims.get(lease.key)
                if claim is not None and (claim.epoch != lease.epoch or claim.owner != lease.owner):
                    return False
        return True
