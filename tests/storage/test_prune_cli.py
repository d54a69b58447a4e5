"""``python -m storage prune``: a separate program run against a SQLite file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storage import SQLStorage, utcnow
from tests.storage.records import at, claim, event, snapshot

pytestmark = pytest.mark.processes


def _cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "STORAGE_URL"}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "storage", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def _seed(url: str) -> None:
    """A finished run (one completed claim), a pending run and an in-flight claim; audit."""
    store = SQLStorage(url)
    try:
        await store.save_snapshot(snapshot("done", second=0))
        await store.claim(claim("done", "call_1#0"))
        await store.complete_claim("done", "call_1#0", {"ok": True})
        await store.delete_snapshot("done")
        await store.save_snapshot(snapshot("pending", second=0))
        await store.claim(claim("flying", "call_1#0"))
        await store.append_audit(event(1, run_id="done"))
        await store.append_audit(event(2, run_id="pending"))
    finally:
        await store.close()


async def _state(url: str) -> tuple[int, bool, int, int]:
    store = SQLStorage(url)
    try:
        claims = await store.list_claims_of_runs(["done", "flying"])
        pending = await store.load_snapshot("pending") is not None
        return len(claims["done"]), pending, len(claims["flying"]), len(await store.query_audit())
    finally:
        await store.close()


async def test_prune_0d_removes_finished_claims_prints_counts_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cs.db'}"
    await _seed(url)

    kept = _cli("prune", "--older-than", "30d", "--url", url, cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.startswith("pruned 0 claims,") and kept.stdout.count("\n") == 1

    result = _cli("prune", "--older-than", "0d", cwd=tmp_path, env={"STORAGE_URL": url})

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "pruned 1 claims, 0 approvals, 0 failed-run snapshots, 0 card records, 0 audit events, "
        "0 expired values, 0 escalation steps, 0 ended grants\n"
    )
    assert await _state(url) == (0, True, 1, 2)


async def test_prune_with_audit_removes_only_older_events_of_ended_runs(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cs.db'}"
    await _seed(url)
    assert at(1) < utcnow()  # the seeded events are in the past

    result = _cli("prune", "--older-than", "90s", "--audit", "--url", url, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "1 audit events" in result.stdout
    assert (await _state(url))[3] == 1  # the pending run's event stays


@pytest.mark.parametrize("duration", ["30", "1w", "-1d", "1.5h", "d", "", "30 days", "99999999d"])
def test_a_bad_duration_exits_2_with_one_line_saying_the_format(
    tmp_path: Path, duration: str
) -> None:
    result = _cli("prune", f"--older-than={duration}", "--url", "memory://", cwd=tmp_path)

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "--older-than" in result.stderr
    assert "90s, 15m, 12h, 30d" in result.stderr or "at most" in result.stderr


def test_an_unreachable_store_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = _cli("prune", "--older-than", "1d", "--url", "redis://127.0.0.1:1/0", cwd=tmp_path)

    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_help_shows_prune_and_its_options(tmp_path: Path) -> None:
    top = _cli("--help", cwd=tmp_path)
    sub = _cli("prune", "--help", cwd=tmp_path)

    assert top.returncode == 0 and "prune" in top.stdout
    assert sub.returncode == 0
    assert all(opt in sub.stdout for opt in ("--older-than", "--audit", "--url"))


async def test_prune_with_audit_keeps_cards_and_the_outbox_and_ended_runs_cards_go(
    tmp_path: Path,
) -> None:
    from storage import CardRecord, OutboxEntry

    url = f"sqlite+aiosqlite:///{tmp_path / 'cs.db'}"
    await _seed(url)
    store = SQLStorage(url)
    try:
        for run_id in ("pending", "done"):
            await store.put_card(
                CardRecord(
                    run_id=run_id,
                    tool_call_id="call_1",
                    team="T1",
                    channel="C1",
                    ts="1.0",
                    thread_ts="0.5",
                    posted_at=at(1),
                )
            )
        await store.put_outbox(
            OutboxEntry(
                id="w1", created_at=at(0), write={"method": "chat.update"}, next_try_at=at(0)
            )
        )
    finally:
        await store.close()

    result = _cli("prune", "--older-than", "0d", "--audit", "--url", url, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "1 card records, 1 audit events" in result.stdout
    store = SQLStorage(url)
    try:
        assert await store.get_card("pending", "call_1") is not None
        assert await store.get_card("done", "call_1") is None  # went with its ended run
        assert [e.id for e in await store.list_outbox()] == ["w1"]
    finally:
        await store.close()
