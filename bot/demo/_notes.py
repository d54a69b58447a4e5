"""``notes``: the demo's MCP server, for the gateway of the local workspace (SPEC 17).

With no policy file of its own, the local workspace serves this small MCP server (in the bot's
process, over the SDK's in-memory transport) so that an MCP client pointed at ``/mcp`` has
something to call at once: ``notes_list_notes`` and ``notes_read_note`` are read-only (they run
at once), ``notes_write_note`` and ``notes_delete_note`` change things (they wait for a person,
on a card in the workspace's channel). The notes live in the process.

Example:
    >>> server = notes_server()
    >>> async with server:  # doctest: +SKIP
    ...     tools = await server.list_tools()  # notes_list_notes, ...
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the MCP SDK is imported when the server is built (the gateway is on)
    from mcp.client._transport import TransportStreams
    from mcp.server.mcpserver import MCPServer as SDKServer

    from tools.mcp import MCPServer

NOTES_SERVER = "notes"
"""The server's name: its tools are ``notes_<tool>``."""


def notes_app() -> SDKServer:
    """The server itself (the SDK's ``MCPServer``), with a welcome note."""
    from mcp.server.mcpserver import MCPServer as SDKServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    app = SDKServer(NOTES_SERVER, log_level="ERROR")
    notes = {"welcome": "Hello from the demo notes server."}

    @app.tool(annotations=ToolAnnotations(readOnlyHint=True, title="List notes"))
    def list_notes() -> list[str]:
        """The names of every note."""
        return sorted(notes)

    @app.tool(annotations=ToolAnnotations(readOnlyHint=True, title="Read a note"))
    def read_note(name: str) -> str:
        """Read one note by name."""
        if name not in notes:
            raise ToolError(f"there is no note {name!r}; list them with list_notes")
        return notes[name]

    @app.tool(
        annotations=ToolAnnotations(
            readOnlyHint=False, destructiveHint=False, idempotentHint=True, title="Write a note"
        )
    )
    def write_note(name: str, text: str) -> str:
        """Write (or replace) a note."""
        notes[name] = text
        return f"wrote {name}"

    @app.tool(annotations=ToolAnnotations(destructiveHint=True, title="Delete a note"))
    def delete_note(name: str) -> str:
        """Delete a note for good."""
        if notes.pop(name, None) is None:
            raise ToolError(f"there is no note {name!r}")
        return f"deleted {name}"

    return app


def notes_server() -> MCPServer:
    """The demo server as ``tools.mcp`` connects to it (in this process, no subprocess)."""
    from mcp.client._memory import InMemoryTransport

    from tools.mcp import MCPServer

    app = notes_app()

    def transport() -> AbstractAsyncContextManager[TransportStreams]:
        return InMemoryTransport(app)

    return MCPServer(NOTES_SERVER, transport)
