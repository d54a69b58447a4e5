"""Errors raised by storage backends.

StorageError
├── StorageConfigError      the storage URL cannot be used
├── StorageUnavailable      the database / Redis server does not answer (try again later)
├── SnapshotVersionConflict another process changed a snapshot first
├── StaleLease              a claim was taken over: its old owner may no longer write for it
└── GrantUnavailable        a standing grant is revoked, expired or used up (nothing written)
"""

from __future__ import annotations


class StorageError(Exception):
    """Root of every error raised by the ``storage`` package."""


class StorageConfigError(StorageError):
    """The storage URL names no backend or cannot be opened."""


class StorageUnavailable(StorageError):
    """The storage server could not be reached, or the connection broke: nothing was written
    (for a write, the transaction did not commit, unless the server committed it just before
    the connection broke). Retry once the server answers again."""

    def __init__(self, where: str, cause: BaseException) -> None:
        self.where = where
        """The server, as its URL without password."""
        super().__init__(
            f"storage at {where} is unreachable ({type(cause).__name__}: {cause}); check that "
            "the server is running and STORAGE_URL points at it"
        )


class SnapshotVersionConflict(StorageError):
    """A snapshot was written by someone else since it was read; reload it and retry."""

    def __init__(self, run_id: str, expected_version: int) -> None:
        self.run_id = run_id
        self.expected_version = expected_version
        super().__init__(
            f"snapshot of run {run_id!r} is no longer at version {expected_version}: "
            "another process changed it; reload the snapshot and apply the change again"
        )


class StaleLease(StorageError):
    """A renewal or a fenced completion on behalf of an owner whose lease epoch is no longer the
    claim's: another instance took the claim over. Nothing was written; the old owner must
    abandon the work (the agents package raises it as ``agents.errors.LeaseLost``)."""

    def __init__(
        self, run_id: str, key: str, *, owner: str | None, epoch: int, held: str | None = None
    ) -> None:
        self.run_id = run_id
        self.key = key
        self.owner = owner
        """The owner the refused write was made for."""
        self.epoch = epoch
        """The epoch the refused write was made with."""
        super().__init__(
            f"claim {key!r} of run {run_id!r} is no longer held by {owner!r} at epoch {epoch}"
            + (f" (now: {held})" if held else "")
            + ": another instance took it over after its lease lapsed; drop this write and the "
            "run (the new owner reports the outcome), and make CLAIM_LEASE_SECONDS longer than "
            "pauses of this process"
        )


class GrantUnavailable(StorageError):
    """A change used a standing grant that may not be used now (revoked, expired, every use
    taken, or unknown): nothing of the change was written. The call it would have approved
    waits for a person as usual."""

    def __init__(self, grant_id: str, why: str) -> None:
        self.grant_id = grant_id
        """The grant the change tried to use."""
        self.why = why
        """Why not, in words."""
        super().__init__(
            f"grant {grant_id!r} approves nothing more: {why}; the call waits for a person"
        )
