"""The upstream MCP server the gateway's figure calls (``python -m bench._mcp_upstream PORT``):
Streamable HTTP on 127.0.0.1, a read-only tool and a write (the gateway holds the write), with
the official SDK's ``MCPServer``; ``GET /healthz`` says it serves."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from starlette.requests import Request
from starlette.responses import JSONResponse

server = MCPServer("up", log_level="ERROR")
_values: dict[str, str] = {}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read(key: str) -> str:
    """Read a value (read-only: the gateway passes it at once)."""
    return _values.get(key, "")


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def write(key: str, value: str) -> str:
    """Write a value (the gateway holds it for a person)."""
    _values[key] = value
    return f"wrote {key}"


@server.custom_route("/healthz", methods=["GET"])  # type: ignore[untyped-decorator]
async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
