"""The local workspace serves the gateway (SPEC 17): ``make run`` plus one command points an MCP
client at countersign (``/mcp`` with a person's well-known local token), its demo ``notes``
server has something to call at once, and a held call is a card in the page's channel that
another person approves there."""

from __future__ import annotations

import asyncio

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bot.local._workspace import CHANNEL_ID
from tests.bot.local.fixtures import ALEX, local_workspace


async def test_an_mcp_client_calls_the_demo_server_and_its_held_call_is_approved_in_the_page() -> (
    None
):
    async with (
        local_workspace() as local,
        httpx2.AsyncClient(headers={"Authorization": "Bearer local-sam"}) as http,
        streamable_http_client(f"{local.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"notes_list_notes", "notes_delete_note"} <= names
        listed = await client.call_tool("notes_list_notes", {})  # read-only: at once
        assert not listed.is_error and "welcome" in str(listed.structured_content)
        deleting = asyncio.create_task(client.call_tool("notes_delete_note", {"name": "welcome"}))
        card = None
        for _ in range(500):
            shown = [
                m
                for m in (await local.state(ALEX))["messages"]
                if m.get("channel", CHANNEL_ID) == CHANNEL_ID and "Delete a note" in m["text"]
            ]
            if shown:
                card = shown[-1]
                break
            await asyncio.sleep(0.02)
        assert card is not None and "<@U0SAM>" in str(card["blocks"])  # requested by sam
        await local.click(card, "approval:approve", user=ALEX)
        deleted = await deleting
    assert not deleted.is_error and "deleted welcome" in str(deleted.content)
