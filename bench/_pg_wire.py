"""What an ``asyncpg`` connection sends to PostgreSQL, read off the wire as it is written.

``WireTap.attach(connection)`` wraps the ``write`` / ``writelines`` of the connection's
transport and parses the frontend messages of the PostgreSQL protocol, so every statement is
seen however it was sent: through SQLAlchemy (prepared statements, ``BEGIN`` / ``COMMIT`` as
simple queries) or straight on the driver (``storage.sql.postgres._decision_path``).

- a statement is an ``Execute`` (of a prepared statement; its text is the one last bound) or a
  simple ``Query`` (asyncpg sends ``BEGIN`` / ``COMMIT`` / ``ROLLBACK`` and scripts so);
- a round trip is a ``Sync``, a ``Flush`` or a simple ``Query``: the client then waits for the
  server (asyncpg sends ``Parse`` + ``Describe`` + ``Flush`` before a statement's first run on
  a connection, then ``Bind`` + ``Execute`` + ``Sync``: two round trips the first time);
- a transaction is a ``BEGIN`` or a statement run outside one (autocommit: it commits itself).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_HEADER = struct.Struct("!cI")
_VERB = re.compile(r"\s*([A-Za-z]*)")


def verb(sql: str) -> str:
    """The first word of ``sql``, upper case (``""`` for an empty statement such as ``;``)."""
    match = _VERB.match(sql)
    return match.group(1).upper() if match else ""


@dataclass
class Sent:
    """One statement as the server received it."""

    sql: str
    in_transaction: bool
    """Sent inside a ``BEGIN`` … ``COMMIT`` (else its own, autocommitted transaction)."""


@dataclass
class WireTap:
    """Everything the attached connections sent: statements (in order) and round trips."""

    statements: list[Sent] = field(default_factory=list)
    round_trips: int = 0
    on_statement: Callable[[Sent], None] | None = None
    """Called with each statement as it is sent."""
    on_round_trip: Callable[[], None] | None = None
    """Called on each round trip."""

    def attach(self, connection: Any) -> None:
        """Tap ``connection`` (an ``asyncpg.Connection``) from now on."""
        transport = connection._transport
        stream = _Stream(self)
        write, writelines = transport.write, transport.writelines

        def tapped_write(data: Any) -> None:
            stream.feed(bytes(data))
            write(data)

        def tapped_writelines(buffers: Iterable[Any]) -> None:
            buffers = list(buffers)
            for data in buffers:
                stream.feed(bytes(data))
            writelines(buffers)

        transport.write, transport.writelines = tapped_write, tapped_writelines

    @property
    def autocommitted(self) -> bool:
        """Whether every statement ran outside ``BEGIN`` … ``COMMIT`` (each its own transaction)."""
        return not any(s.in_transaction for s in self.statements)

    @contextmanager
    def counting(self) -> Iterator[WireTap]:
        """What is sent inside the ``with`` block only (statements and round trips)."""
        start, trips = len(self.statements), self.round_trips
        part = WireTap()
        try:
            yield part
        finally:
            part.statements = self.statements[start:]
            part.round_trips = self.round_trips - trips

    def sent(self, statement: Sent) -> None:
        self.statements.append(statement)
        if self.on_statement is not None:
            self.on_statement(statement)

    def waited(self) -> None:
        self.round_trips += 1
        if self.on_round_trip is not None:
            self.on_round_trip()


class _Stream:
    """The frontend messages of one connection, parsed as the bytes go out."""

    def __init__(self, tap: WireTap) -> None:
        self._tap = tap
        self._pending = b""
        self._prepared: dict[str, str] = {}
        self._bound = ""
        self._in_transaction = False

    def feed(self, data: bytes) -> None:
        self._pending += data
        while len(self._pending) >= _HEADER.size:
            kind, length = _HEADER.unpack_from(self._pending)
            if len(self._pending) < 1 + length:
                return
            body = self._pending[_HEADER.size : 1 + length]
            self._pending = self._pending[1 + length :]
            self._message(kind, body)

    def _message(self, kind: bytes, body: bytes) -> None:
        if kind == b"P":  # Parse: statement name, query text, ...
            name, rest = body.split(b"\0", 1)
            self._prepared[name.decode()] = rest.split(b"\0", 1)[0].decode()
        elif kind == b"B":  # Bind: portal name, statement name, ...
            _portal, statement, _ = body.split(b"\0", 2)
            self._bound = self._prepared.get(statement.decode(), "")
        elif kind == b"E":
            self._statement(self._bound)
        elif kind == b"Q":
            self._tap.waited()
            self._statement(body.rstrip(b"\0").decode())
        elif kind in (b"S", b"H"):  # Sync, or Flush (asyncpg's Parse + Describe)
            self._tap.waited()

    def _statement(self, sql: str) -> None:
        first = verb(sql)
        if first in ("BEGIN", "START"):
            self._in_transaction = True
            self._tap.sent(Sent(sql, in_transaction=True))
            return
        self._tap.sent(Sent(sql, in_transaction=self._in_transaction))
        if first in ("COMMIT", "ROLLBACK", "END", "ABORT"):
            self._in_transaction = False
