"""The local workspace survives ``make run`` being restarted: its channel is kept in the
configured storage, so a card posted before the restart is still there and approving it
finishes its run."""

from __future__ import annotations

from pathlib import Path

from bot import APPROVE_ACTION
from tests.bot.local.fixtures import SAM, local_workspace, texts


async def test_a_pending_card_survives_a_restart_and_approving_it_finishes_the_run(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'local.db'}"
    async with local_workspace(STORAGE_URL=url) as before:
        ts = await before.say("delete record 42")
        card = await before.card(ts)
        shown = (await before.state())["messages"]

    async with local_workspace(STORAGE_URL=url) as after:
        assert [m["ts"] for m in (await after.state())["messages"]] == [m["ts"] for m in shown]
        again = await after.card(ts)
        assert again["ts"] == card["ts"] and again["blocks"] == card["blocks"]
        await after.click(again, APPROVE_ACTION, user=SAM)
        thread = await after.thread(ts)
        assert "Approved by <@U0SAM>" in texts(thread)
        assert "Done: record 42 (Acme Corp #42) was deleted." in texts(thread)


async def test_a_click_on_a_message_the_server_does_not_know_is_a_404_not_a_crash() -> None:
    async with (
        local_workspace() as local,
        local.http.post(
            f"{local.url}/_local/actions",
            json={"user": SAM, "ts": "1.000001", "action_id": APPROVE_ACTION},
        ) as response,
    ):
        assert response.status == 404  # the page shows this as a notice (app.js)
