"""Model-facing names for MCP tools, and ``${VAR}`` expansion in env values and headers."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from tools.mcp._errors import MissingEnvironmentVariable

MAX_NAME_LENGTH = 64
"""Function names a model accepts: ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI's rule)."""

_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HASH_LENGTH = 8


def mcp_tool_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` on ``server``: ``<server>_<tool>``, made safe.

    Names that are already safe stay as they are. Others get unsafe characters replaced by
    ``_``, are cut to fit, and end with a short hash of the original, so the result is
    deterministic (the same on every connection and every restart) and unique.

    Example:
        >>> mcp_tool_name("github", "create_issue")
        'github_create_issue'
    """
    raw = f"{server}_{tool}"
    if _SAFE.match(raw):
        return raw
    digest = hashlib.sha256(raw.encode()).hexdigest()[:_HASH_LENGTH]
    stem = _UNSAFE_CHARS.sub("_", raw)[: MAX_NAME_LENGTH - _HASH_LENGTH - 1]
    return f"{stem}_{digest}"


def is_safe_server_name(name: str) -> bool:
    """True when ``name`` can prefix tool names (letters, digits, ``_``, ``-``; 1–32 long)."""
    return bool(_SAFE.match(name)) and len(name) <= 32


def expand(
    server: str, values: Mapping[str, str] | None, environ: Mapping[str, str], where: str
) -> dict[str, str]:
    """Replace every ``${VAR}`` in ``values`` from ``environ``; a missing one is an error."""
    expanded: dict[str, str] = {}
    for key, value in (values or {}).items():

        def lookup(match: re.Match[str], key: str = key) -> str:
            variable = match.group(1)
            if variable not in environ:
                raise MissingEnvironmentVariable(server, variable, f"{where} {key!r}")
            return environ[variable]

        expanded[key] = _VARIABLE.sub(lookup, value)
    return expanded
