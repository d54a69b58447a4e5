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
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from bot.policy._toml_words import problem_lines, toml_file

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
    data = toml_file(path, "API tokens file", "API_TOKENS")
    if isinstance(data, list):
        return data
    try:
        parsed = TokenFile.model_validate(data)
    except ValidationError as exc:
        return problem_lines(path, exc)
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
