"""User-facing strings of the local workspace, in one place."""

from __future__ import annotations

MODEL_DEMO = "offline demo model"
MODEL_OPENAI = "OpenAI {model}"
SERVING = "local workspace: open http://%s:%s in a browser (no Slack token set)"
LOCAL_TOKENS = (
    "local workspace: MCP clients and hooks connect to /mcp and /api/gate with one of the "
    "people's tokens: %s (API_TOKENS is not set)"
)
CANNOT_BIND = (
    "The local workspace cannot listen on {host}:{port} ({error}): set PORT to a free port "
    "(or HOST to an address of this machine)"
)
