"""A fake OpenAI Chat Completions server that the REAL ``openai`` client talks to.

An aiohttp app on 127.0.0.1 (ephemeral port) serving ``POST /v1/chat/completions`` in the real
wire format, including SSE streaming (``data: {...}`` … ``data: [DONE]``). Each test scripts
the answers in order; every request body is recorded. Errors carry ``retry-after-ms: 1`` so
the client's own retries take no time.

Example:
    async with FakeOpenAIServer() as server:
        server.reply("Hello", " there")
        server.tool_calls(FakeToolCall("delete_record", {"id": "abc-123"}))
        async with server.client(max_retries=2) as client:
            model = OpenAIModel("gpt-test", client=client)
            ...
        assert server.requests[0].body["stream"] is True

From another test folder, build a fixture the same way::

    @pytest.fixture
    async def openai_server() -> AsyncIterator[FakeOpenAIServer]:
        async with FakeOpenAIServer() as server:
            yield server
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web
from openai import AsyncOpenAI

__all__ = ["FakeOpenAIServer", "FakeToolCall", "RecordedRequest", "strict_schema_problems"]


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call the fake model makes; ``args`` as a str is sent verbatim (malformed JSON)."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the fake received."""

    body: dict[str, Any]
    headers: dict[str, str]
    """Lower-cased header names."""
    request_id: str
    """The ``x-request-id`` the fake answered with."""


@dataclass(frozen=True)
class _Answer:
    content: tuple[str, ...] = ()
    tool_calls: tuple[FakeToolCall, ...] = ()
    fragment_size: int = 4
    interleave: bool = True
    usage: tuple[int, int] = (11, 7)
    finish_reason: str | None = None
    refusal: str | None = None
    error_after: str | None = None
    """Send an SSE ``error`` event after the content instead of finishing."""
    pause_after: int | None = None
    """Wait for :meth:`FakeOpenAIServer.release` after this many content chunks."""


@dataclass(frozen=True)
class _Failure:
    status: int
    message: str
    headers: dict[str, str]
    forever: bool = False


class FakeOpenAIServer:
    """A scripted fake of ``POST /v1/chat/completions``; see the module docstring."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        """Every request received, in order."""
        self._script: deque[_Answer | _Failure] = deque()
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._gate = asyncio.Event()
        self.url = ""
        """``http://127.0.0.1:<port>`` once started."""

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"

    async def close(self) -> None:
        self._gate.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        """What to give ``AsyncOpenAI(base_url=...)`` or ``OPENAI_BASE_URL``."""
        return f"{self.url}/v1"

    def client(self, *, max_retries: int = 2, api_key: str = "test") -> AsyncOpenAI:
        """A real ``AsyncOpenAI`` pointed at this fake (close it, or use ``async with``)."""
        return AsyncOpenAI(base_url=self.base_url, api_key=api_key, max_retries=max_retries)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The recorded request bodies."""
        return [r.body for r in self.requests]

    @property
    def pending(self) -> int:
        """Scripted answers not yet consumed."""
        return len(self._script)

    # -- scripting -------------------------------------------------------------------------

    def reply(
        self,
        *chunks: str,
        usage: tuple[int, int] = (11, 7),
        finish: str = "stop",
        pause_after: int | None = None,
    ) -> None:
        """Answer with text, streamed as the given ``chunks`` in order; with ``pause_after=n``
        the stream stops after ``n`` chunks until :meth:`release` is called."""
        self._script.append(
            _Answer(content=chunks, usage=usage, finish_reason=finish, pause_after=pause_after)
        )

    def release(self) -> None:
        """Let paused streams continue."""
        self._gate.set()

    def tool_calls(
        self,
        *calls: FakeToolCall,
        fragment_size: int = 4,
        interleave: bool = True,
        text: Sequence[str] = (),
        usage: tuple[int, int] = (11, 7),
        finish: str = "tool_calls",
    ) -> None:
        """Call tools: each call's arguments are split into ``fragment_size`` pieces, and the
        pieces of parallel calls are interleaved round-robin when ``interleave``."""
        self._script.append(
            _Answer(
                content=tuple(text),
                tool_calls=calls,
                fragment_size=fragment_size,
                interleave=interleave,
                usage=usage,
                finish_reason=finish,
            )
        )

    def structured(self, value: Any, *, chunk_size: int = 8) -> None:
        """Answer a structured-output request with ``value`` as JSON, streamed in pieces."""
        text = json.dumps(value)
        self.reply(*(text[i : i + chunk_size] for i in range(0, len(text), chunk_size)))

    def refuse(self, reason: str) -> None:
        """Refuse (the ``refusal`` delta of structured outputs)."""
        self._script.append(_Answer(refusal=reason, finish_reason="stop"))

    def stream_error(self, message: str, *, after: Sequence[str] = ()) -> None:
        """Start a 200 stream, send ``after`` as text, then an SSE error event."""
        self._script.append(_Answer(content=tuple(after), error_after=message))

    def fail(
        self,
        status: int,
        *,
        message: str | None = None,
        retry_after: str | None = None,
        times: int = 1,
    ) -> None:
        """Answer ``times`` requests with an HTTP error (``retry-after-ms: 1`` unless
        ``retry_after`` (seconds) is given)."""
        for _ in range(times):
            self._script.append(
                _Failure(status, message or f"fake error {status}", _retry(retry_after))
            )

    def fail_forever(self, status: int, *, message: str | None = None) -> None:
        """Answer every request from now on with an HTTP error."""
        self._script.append(
            _Failure(status, message or f"fake error {status}", _retry(None), forever=True)
        )

    # -- serving ---------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        request_id = f"req_{next(self._ids)}"
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(RecordedRequest(body=body, headers=headers, request_id=request_id))
        if problems := strict_schema_problems(body):
            return _error_response(400, "Invalid schema: " + "; ".join(problems), {}, request_id)
        if not self._script:
            return _error_response(
                500,
                "fake OpenAI server: script exhausted (the test scripted fewer answers)",
                {"x-should-retry": "false"},
                request_id,
            )
        step = self._script[0]
        if not (isinstance(step, _Failure) and step.forever):
            self._script.popleft()
        if isinstance(step, _Failure):
            return _error_response(step.status, step.message, step.headers, request_id)
        chunks = list(self._chunks(step, body))
        if not body.get("stream"):
            return web.json_response(
                _completion(chunks, body, step), headers={"x-request-id": request_id}
            )
        return await self._stream(request, chunks, body, step, request_id)

    async def _stream(
        self,
        request: web.Request,
        chunks: list[tuple[dict[str, Any], Any]],
        body: dict[str, Any],
        step: _Answer,
        request_id: str,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "x-request-id": request_id}
        )
        await response.prepare(request)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for position, (delta, finish) in enumerate(chunks):
            if step.pause_after is not None and position == step.pause_after + 1:
                await self._gate.wait()  # +1: the first chunk only carries the role
            chunk = _chunk(body, [{"index": 0, "delta": delta, "finish_reason": finish}])
            if include_usage:
                chunk["usage"] = None
            await response.write(_sse(chunk))
        if step.error_after is not None:
            await response.write(
                _sse({"error": {"message": step.error_after, "type": "server_error"}})
            )
        elif include_usage:
            await response.write(_sse({**_chunk(body, []), "usage": _usage(step.usage)}))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _chunks(self, step: _Answer, body: dict[str, Any]) -> Iterator[tuple[dict[str, Any], Any]]:
        yield {"role": "assistant", "content": "" if step.content else None}, None
        for text in step.content:
            yield {"content": text}, None
        if step.refusal is not None:
            yield {"refusal": step.refusal}, None
        for fragment in self._fragments(step):
            yield {"tool_calls": [fragment]}, None
        if step.error_after is None:
            yield {}, step.finish_reason

    def _fragments(self, step: _Answer) -> list[dict[str, Any]]:
        per_call: list[list[dict[str, Any]]] = []
        for index, call in enumerate(step.tool_calls):
            args = call.args if isinstance(call.args, str) else json.dumps(call.args)
            size = max(1, step.fragment_size)
            first = {
                "index": index,
                "id": call.id or f"call_fake_{next(self._call_ids)}",
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            pieces = [
                {"index": index, "function": {"arguments": args[i : i + size]}}
                for i in range(0, len(args), size)
            ]
            per_call.append([first, *pieces])
        if not step.interleave:
            return [f for fragments in per_call for f in fragments]
        mixed = itertools.zip_longest(*per_call)
        return [f for row in mixed for f in row if f is not None]


def strict_schema_problems(body: dict[str, Any]) -> list[str]:
    """What OpenAI would reject in the strict schemas of a request body (tools marked
    ``strict: true`` and a strict ``json_schema`` response format), as readable strings."""
    schemas: list[tuple[str, Any]] = []
    for tool in body.get("tools") or ():
        function = tool.get("function", {})
        if function.get("strict"):
            schemas.append((f"function {function.get('name')!r}", function.get("parameters")))
    response_format = body.get("response_format") or {}
    json_schema = response_format.get("json_schema") or {}
    if response_format.get("type") == "json_schema" and json_schema.get("strict"):
        schemas.append((f"response_format {json_schema.get('name')!r}", json_schema.get("schema")))
    problems: list[str] = []
    for where, schema in schemas:
        if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
            problems.append(f"{where}: the root schema must be an object")
            continue
        defs = schema.get("$defs") or {}
        _check(schema, defs, where, (), problems)
        for name, sub in defs.items():
            _check(sub, defs, where, ("$defs", name), problems)
    return problems


_REJECTED = ("default", "allOf", "oneOf", "not", "if", "then", "else", "patternProperties")


def _check(
    node: Any, defs: dict[str, Any], where: str, path: tuple[str, ...], out: list[str]
) -> None:
    context = f"{where}, context={path}"
    if not isinstance(node, dict):
        out.append(f"{context}: a schema must be an object")
        return
    if "$ref" in node:
        if len(node) > 1:
            out.append(f"{context}: $ref cannot have keywords {sorted(set(node) - {'$ref'})}")
        if str(node["$ref"]).removeprefix("#/$defs/") not in defs:
            out.append(f"{context}: reference {node['$ref']!r} can't be resolved")
        return
    for key in _REJECTED:
        if key in node:
            out.append(f"{context}: {key!r} is not permitted")
    if not {"type", "anyOf", "enum", "const"} & set(node):
        out.append(f"{context}: schema must have a 'type' key")
    for i, variant in enumerate(node.get("anyOf") or ()):
        _check(variant, defs, where, (*path, "anyOf", str(i)), out)
    kind = node.get("type")
    kinds: list[Any] = kind if isinstance(kind, list) else [kind]
    if "object" in kinds:
        properties = node.get("properties") or {}
        if node.get("additionalProperties") is not False:
            out.append(
                f"{context}: 'additionalProperties' is required to be supplied and to be false"
            )
        if sorted(node.get("required") or ()) != sorted(properties):
            out.append(
                f"{context}: 'required' is required to be supplied and to be an array "
                "including every key in properties"
            )
        for name, sub in properties.items():
            _check(sub, defs, where, (*path, "properties", name), out)
    if "array" in kinds:
        _check(node.get("items"), defs, where, (*path, "items"), out)


def _retry(retry_after: str | None) -> dict[str, str]:
    return {"retry-after": retry_after} if retry_after is not None else {"retry-after-ms": "1"}


def _error_response(
    status: int, message: str, headers: dict[str, str], request_id: str
) -> web.Response:
    kind = (
        "rate_limit_error"
        if status == 429
        else "server_error"
        if status >= 500
        else "invalid_request_error"
    )
    return web.json_response(
        {"error": {"message": message, "type": kind, "param": None, "code": None}},
        status=status,
        headers={**headers, "x-request-id": request_id},
    )


def _chunk(body: dict[str, Any], choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": choices,
    }


def _usage(usage: tuple[int, int]) -> dict[str, int]:
    prompt, completion = usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _sse(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def _completion(
    chunks: list[tuple[dict[str, Any], Any]], body: dict[str, Any], step: _Answer
) -> dict[str, Any]:
    """The non-streaming answer: the same deltas, merged into one message."""
    content = "".join(d.get("content") or "" for d, _ in chunks) or None
    calls: dict[int, dict[str, Any]] = {}
    for delta, _ in chunks:
        for fragment in delta.get("tool_calls", ()):
            call = calls.setdefault(
                fragment["index"],
                {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
            )
            call["id"] = fragment.get("id") or call["id"]
            call["function"]["name"] += fragment.get("function", {}).get("name", "")
            call["function"]["arguments"] += fragment.get("function", {}).get("arguments", "")
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": step.refusal}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason}],
        "usage": _usage(step.usage),
    }
