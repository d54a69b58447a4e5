"""Contract: a takeover is final. Each takeover raises the claim's lease ``epoch``; a renewal or
a fenced completion on behalf of the old holder is refused inside the write (``StaleLease``),
and a refused state change writes nothing at all (SPEC 3.4)."""

from __future__ import annotations

import pytest

from storage import Completion, StaleLease, StateChange, Storage
from tests.storage.records import at, claim, event, message, snapshot


async def _taken_over(storage: Storage, owner: str = "B") -> None:
    """``run-1``'s claim ``call_1#0``, held by A at epoch 0, taken over by ``owner``."""
    await storage.commit(StateChange(snapshot=snapshot("run-1")))
    await storage.claim(claim("run-1", "call_1#0", owner="A", lease_until=at(10)))
    [taken] = await storage.take_over_expired_claims(owner, now=at(50), lease_until=at(80))
    assert (taken.owner, taken.epoch) == (owner, 1)


def _completion(owner: str, epoch: int, **outcome: object) -> Completion:
    return Completion(
        run_id="run-1", key="call_1#0", outcome=dict(outcome), owner=owner, epoch=epoch
    )


def _whole_change(done: Completion) -> StateChange:
    """A completion with everything a completion's change writes besides it."""
    return StateChange(
        completions=[done],
        snapshot=snapshot("run-1", version=2),
        messages=[message("t1", 1)],
        audit=[event(1, run_id="run-1", kind="executed")],
    )


async def test_a_claim_starts_at_epoch_zero_and_every_takeover_raises_it(storage: Storage) -> None:
    await storage.claim(claim("run-1", "call_1#0", owner="A", lease_until=at(10)))
    [first] = await storage.take_over_expired_claims("B", now=at(50), lease_until=at(60))
    [second] = await storage.take_over_expired_claims("C", now=at(70), lease_until=at(80))
    [stored] = await storage.list_claims("run-1")

    assert (first.owner, first.epoch) == ("B", 1)
    assert (second.owner, second.epoch) == ("C", 2)
    assert stored == second
    assert (await storage.load_run("run-1"))[1] == [second]


async def test_the_old_holders_renewal_is_refused_after_a_takeover(storage: Storage) -> None:
    await _taken_over(storage)

    assert await storage.renew_lease("run-1", "call_1#0", "A", at(200), epoch=0) is False
    assert await storage.renew_lease("run-1", "call_1#0", "B", at(200), epoch=0) is False
    assert await storage.renew_lease("run-1", "call_1#0", "B", at(200), epoch=1) is True
    [stored] = await storage.list_claims("run-1")
    assert (stored.owner, stored.epoch, stored.lease_until) == ("B", 1, at(200))


async def test_a_takeover_by_the_same_owner_still_fences_its_earlier_lease(
    storage: Storage,
) -> None:
    await _taken_over(storage, owner="A")  # the instance's own recovery took its claim over

    assert await storage.renew_lease("run-1", "call_1#0", "A", at(200), epoch=0) is False
    with pytest.raises(StaleLease):
        await storage.commit(StateChange(completions=[_completion("A", 0, ok=True)]))
    await storage.commit(StateChange(completions=[_completion("A", 1, ok=True)]))


async def test_a_stale_completion_is_refused_and_writes_nothing(storage: Storage) -> None:
    await _taken_over(storage)

    with pytest.raises(StaleLease) as refused:
        await storage.commit(_whole_change(_completion("A", 0, result="old owner")))

    assert (refused.value.run_id, refused.value.key) == ("run-1", "call_1#0")
    assert (refused.value.owner, refused.value.epoch) == ("A", 0)
    found, [stored], _ = await storage.load_run("run-1")
    assert found == snapshot("run-1")  # version 1: not written
    assert (stored.status, stored.outcome, stored.owner, stored.epoch) == (
        "claimed",
        None,
        "B",
        1,
    )
    assert await storage.list_messages("t1") == []
    assert await storage.query_audit(run_id="run-1") == []


async def test_a_stale_completion_of_a_claim_the_new_owner_completed_changes_nothing(
    storage: Storage,
) -> None:
    await _taken_over(storage)
    await storage.commit(_whole_change(_completion("B", 1, result="new owner")))

    with pytest.raises(StaleLease):
        await storage.commit(
            StateChange(
                completions=[_completion("A", 0, result="old owner")],
                delete_snapshot="run-1",
                messages=[message("t1", 2)],
                audit=[event(2, run_id="run-1", kind="executed")],
            )
        )

    found, [stored], _ = await storage.load_run("run-1")
    assert found == snapshot("run-1", version=2)
    assert stored.outcome == {"result": "new owner"} and stored.owner == "B"
    assert [m.id for m in await storage.list_messages("t1")] == ["t1-m1"]
    assert [e.id for e in await storage.query_audit(run_id="run-1")] == [event(1).id]


async def test_the_current_owners_completion_is_written_whole(storage: Storage) -> None:
    await _taken_over(storage)

    assert await storage.commit(_whole_change(_completion("B", 1, result="new owner"))) is None

    found, [stored], _ = await storage.load_run("run-1")
    assert found == snapshot("run-1", version=2)
    assert (stored.status, stored.outcome, stored.epoch) == (
        "completed",
        {"result": "new owner"},
        1,
    )
    assert [m.id for m in await storage.list_messages("t1")] == ["t1-m1"]
    assert len(await storage.query_audit(run_id="run-1")) == 1


async def test_a_fenced_completion_of_a_claim_never_taken_over_works(storage: Storage) -> None:
    await storage.claim(claim("run-1", "call_1#0", owner="A", lease_until=at(10)))

    await storage.commit(StateChange(completions=[_completion("A", 0, ok=True)]))

    [stored] = await storage.list_claims("run-1")
    assert stored.status == "completed" and stored.outcome == {"ok": True}


async def test_a_fenced_completion_is_checked_before_the_snapshot_version(
    storage: Storage,
) -> None:
    """The stale owner learns it lost the lease, not that the run moved on (it must not retry)."""
    await _taken_over(storage)

    with pytest.raises(StaleLease):
        await storage.commit(
            StateChange(
                completions=[_completion("A", 0, ok=True)],
                snapshot=snapshot("run-1", version=7),
            )
        )


async def test_a_fenced_completion_of_a_missing_claim_is_a_key_error(storage: Storage) -> None:
    with pytest.raises(KeyError):
        await storage.commit(StateChange(completions=[_completion("A", 0, ok=True)]))
