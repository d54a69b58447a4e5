"""``InMemoryStorage``'s claim index: claims by ``(run_id, key)``, and by run."""

from __future__ import annotations

from storage._records import ClaimRecord


class ClaimIndex(dict[tuple[str, str], ClaimRecord]):
    """Claims by ``(run_id, key)``, also findable by run without scanning them all."""

    def __init__(self) -> None:
        super().__init__()
        self._keys_by_run: dict[str, set[str]] = {}

    def __setitem__(self, ids: tuple[str, str], claim: ClaimRecord) -> None:
        super().__setitem__(ids, claim)
        self._keys_by_run.setdefault(ids[0], set()).add(ids[1])

    def __delitem__(self, ids: tuple[str, str]) -> None:
        super().__delitem__(ids)
        keys = self._keys_by_run.get(ids[0])
        if keys is not None:
            keys.discard(ids[1])
            if not keys:
                del self._keys_by_run[ids[0]]

    def of_run(self, run_id: str) -> list[ClaimRecord]:
        """The claims of one run."""
        return [self[(run_id, key)] for key in self._keys_by_run.get(run_id, ())]
