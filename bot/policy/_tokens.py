"""The per-person API tokens file (``API_TOKENS``, SPEC 7): who each token decides as.

TOML with one ``[[tokens]]`` entry per token: the person's Slack user id and the SHA-256 hex
of the token (the token itself is never stored)::

    [[tokens]]
    user = "U024BE7LH"
    sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

``token_file_problems(path)`` returns the parsed ``TokenFile`` or one line per problem, naming
the file, the entry (1-based) and the key, as ``read_policy`` does for the policy file.

Example:
    >>> sha256_hex("s3cret")[:12]
    '1ec1c26b50d5'
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

UserId = Annotated[str, StringConstraints(pattern=r"^[UW][A-Z0-9]+$")]
"""A Slack user id (U…/W…): a token decides as one person, never as a user group."""
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{64}$", to_lower=True)]
"""64 hex digits (case-insensitive)."""


class PersonToken(BaseModel):
    """One ``[[tokens]]`` entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: UserId
    """The person this token decides as."""
    sha256: Sha256
    """The SHA-256 hex of the token (``printf %s "$TOKEN" | sha256sum``)."""


class TokenFile(BaseModel):
    """The whole file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: Annotated[tuple[PersonToken, ...], Field(min_length=1)]
    """Every person's token, in file order."""


def sha256_hex(token: str) -> str:
    """The SHA-256 hex of ``token`` (UTF-8), as the tokens file holds it."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def token_file_problems(path: Path) -> TokenFile | list[str]:
    """The parsed file, or one line per problem (file, entry number, key, what is wrong)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return [
            f"{path}: cannot read the API tokens file ({exc.strerror or exc}); check API_TOKENS"
        ]
    except UnicodeDecodeError:
        return [f"{path}: the API tokens file is not UTF-8 text"]
    except tomllib.TOMLDecodeError as exc:
        return [f"{path}: not valid TOML: {exc}"]
    try:
        parsed = TokenFile.model_validate(data)
    except ValidationError as exc:
        return [f"{path}: {_where(e['loc'])}{_what(e)}" for e in exc.errors(include_url=False)]
    return _duplicates(path, parsed) or parsed


def _duplicates(path: Path, parsed: TokenFile) -> list[str]:
    seen: dict[str, int] = {}
    problems = []
    for number, entry in enumerate(parsed.tokens, start=1):
        if entry.sha256 in seen:
            problems.append(
                f"{path}: token {number}: sha256: the same token as token {seen[entry.sha256]}"
                " (each token decides as one person)"
            )
        seen.setdefault(entry.sha256, number)
    return problems


def _where(loc: tuple[int | str, ...]) -> str:
    """``token 2: sha256: `` from ``("tokens", 1, "sha256")``."""
    parts = list(loc)
    if parts[:1] == ["tokens"] and len(parts) > 1 and isinstance(parts[1], int):
        rest = ".".join(map(str, parts[2:]))
        return f"token {parts[1] + 1}: " + (f"{rest}: " if rest else "")
    return f"{'.'.join(map(str, parts))}: " if parts else ""


def _what(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing (required)"
    if kind == "too_short":
        return 'lists no token: add [[tokens]] entries with user = "U…" and sha256 = "<hex>"'
    if kind == "string_pattern_mismatch":
        if "UW" in str(error.get("ctx", {}).get("pattern")):
            return f"{error.get('input')!r} is not a Slack user id (U…/W…)"
        return "must be the 64 hex digits of the token's SHA-256 (never the token itself)"
    return str(error["msg"])
