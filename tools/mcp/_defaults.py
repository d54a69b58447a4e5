"""Defaults of an MCP server's limits, importable without the MCP SDK."""

from __future__ import annotations

DEFAULT_CALL_TIMEOUT = 60.0
"""``MCP_CALL_TIMEOUT_SECONDS``'s default: seconds one tool call may take."""
