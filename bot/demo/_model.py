"""``DemoModel``: an offline, rule-based ``Model`` that maps plain requests to the built-in tools.

It serves the built-in agent when no ``OPENAI_API_KEY`` is set, so the local workspace works on
a machine with no network. It only calls tools the request offers, so the same class drives
the ``ops`` supervisor (which delegates refunds to ``agent-billing``) and the ``billing``
sub-agent (which calls ``refund``):

- "delete record 42" → ``delete-record {"id": 42}``; "show record 3"; "list records";
- "delete records 3, 4 and 5" → three ``delete-record`` calls in one step (a batch card);
- "refund order 7 for 250" → ``agent-billing`` (ops) / ``refund {"order": 7, "amount": 250}``;
- "open a ticket about the printer" → ``open-ticket {"title": "printer"}``;
- "/call <tool> key=value …" calls any offered tool by name (``bot.demo._commands``): with
  ``MODEL=offline`` it serves any agent, yours included, so its tools can be tried without a
  key;
- after tool results it says in words what happened; anything else gets the help text;
- a structured-output request (auto-resume) is answered from the words of the reply
  ("high", "low", "medium"…): ``{"answered": true, "resume_data": {...}}`` or answered false.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import bot.demo._text as text
from agents.models import ModelEvent, ModelRequest, ObjectOutput, TextDelta, ToolCallRequest, Usage
from bot.demo._commands import is_command, parse_call, usage
from bot.demo._summary import summarize

DEMO_MODEL_ID = "demo"
"""``DemoModel.model_id``."""

_SYNONYMS = {"urgent": "high", "critical": "high", "asap": "high", "normal": "medium"}
_NUMBER = r"#?(\d+)"
_DELETE = re.compile(rf"\b(?:delete|remove)\s+record\s*{_NUMBER}", re.I)
_AND = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)"
_DELETE_MANY = re.compile(rf"\b(?:delete|remove)\s+records\s+(#?\d+(?:{_AND}#?\d+)+)", re.I)
_SHOW = re.compile(rf"\b(?:show|get|view|find)\s+record\s*{_NUMBER}", re.I)
_LIST = re.compile(r"\b(?:list|show)\b(?:\s+(?:all|the))?\s+records\b", re.I)
_REFUND = re.compile(
    rf"\brefund\s+(?:order\s*)?{_NUMBER}\s+(?:for|of|by)?\s*\$?(\d+(?:\.\d+)?)", re.I
)
_TICKET = re.compile(
    r"\b(?:open|create|file|raise)\s+(?:a\s+|an\s+)?(?:(\w+)[- ]priority\s+)?ticket"
    r"\s+(?:about|for|on|regarding)\s+(.+)",
    re.I,
)
_PRIORITY = re.compile(r"\b(low|medium|high)[- ]priority\b", re.I)
_USER_MESSAGE = "User message: "


class DemoModel:
    """The offline demo model (see the module docstring)."""

    @property
    def model_id(self) -> str:
        return DEMO_MODEL_ID

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        for event in self.answer(request):
            yield event
        yield Usage()

    def answer(self, request: ModelRequest) -> list[ModelEvent]:
        """The events answering ``request``, without usage."""
        if request.response_schema is not None:
            reply = _last_user_text(request).rpartition(_USER_MESSAGE)[2]
            return [ObjectOutput(extract(request.response_schema, reply))]
        messages = request.messages
        if messages and messages[-1].role == "tool":
            return _words(summarize(messages))
        if is_command(_last_user_text(request)):
            return _command(request)
        offered = {t.name for t in request.tools}
        many = route_many(_last_user_text(request), offered)
        if many:
            return [ToolCallRequest(f"demo_{uuid.uuid4().hex[:12]}", n, a) for n, a in many]
        call = route(_last_user_text(request), offered)
        if call is not None:
            name, args = call
            return [ToolCallRequest(f"demo_{uuid.uuid4().hex[:12]}", name, args)]
        return _words(text.HELP if offered & _BUILT_IN or not offered else usage(_schemas(request)))


_BUILT_IN = {"list-records", "get-record", "delete-record", "refund", "open-ticket"}
"""The built-in agent's tools: the plain requests above work with them."""


def _command(request: ModelRequest) -> list[ModelEvent]:
    """The call a ``/call`` message asks for, or what is wrong with it."""
    parsed = parse_call(_last_user_text(request), _schemas(request))
    if isinstance(parsed, str):
        return _words(parsed)
    name, args = parsed
    return [ToolCallRequest(f"demo_{uuid.uuid4().hex[:12]}", name, args)]


def _schemas(request: ModelRequest) -> dict[str, dict[str, Any]]:
    return {tool.name: tool.parameters for tool in request.tools}


def route_many(message: str, tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """Several calls of one step a request maps to ("delete records 3, 4 and 5"); empty when
    it names one call or none."""
    m = _DELETE_MANY.search(message)
    if m is None or "delete-record" not in tools:
        return []
    ids = list(dict.fromkeys(int(n) for n in re.findall(r"\d+", m.group(1))))
    return [("delete-record", {"id": n}) for n in ids] if len(ids) > 1 else []


def route(message: str, tools: set[str]) -> tuple[str, dict[str, Any]] | None:
    """The tool call a plain request maps to, among ``tools``; None when none fits."""
    candidates: list[tuple[str, dict[str, Any]] | None] = []
    if m := _DELETE.search(message):
        candidates.append(("delete-record", {"id": int(m.group(1))}))
    if m := _SHOW.search(message):
        candidates.append(("get-record", {"id": int(m.group(1))}))
    if _LIST.search(message):
        candidates.append(("list-records", {}))
    if m := _REFUND.search(message):
        candidates.append(("refund", {"order": int(m.group(1)), "amount": _number(m.group(2))}))
        candidates.append(("agent-billing", {"prompt": message.strip()}))
    if m := _TICKET.search(message):
        candidates.append(("open-ticket", _ticket_args(m, message)))
    for candidate in candidates:
        if candidate is not None and candidate[0] in tools:
            return candidate
    return None


def extract(response_schema: dict[str, Any], message: str) -> dict[str, Any]:
    """Answer an auto-resume request: enum values named in ``message`` fill the resume data."""
    schema = _resume_schema(response_schema)
    words = [_SYNONYMS.get(w, w) for w in re.findall(r"[a-z0-9_-]+", message.lower())]
    data: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        options = [str(v) for v in prop.get("enum") or []]
        found = next((w for w in words if w in options), None)
        if found is not None:
            data[name] = found
    required = schema.get("required") or []
    if data and all(name in data for name in required):
        return {"answered": True, "resume_data": data}
    return {"answered": False, "resume_data": None}


def _resume_schema(response_schema: dict[str, Any]) -> dict[str, Any]:
    resume = (response_schema.get("properties") or {}).get("resume_data") or {}
    for option in resume.get("anyOf") or []:
        if isinstance(option, dict) and option.get("type") != "null":
            return option
    return {}


def _ticket_args(match: re.Match[str], message: str) -> dict[str, Any]:
    title = re.sub(r"^(?:the|a|an|our|my)\s+", "", match.group(2).strip(), flags=re.I)
    title = title.rstrip(" .!?")
    args: dict[str, Any] = {"title": title or "request"}
    named = match.group(1)
    if named is None and (said := _PRIORITY.search(message)) is not None:
        named = said.group(1)
    if named and named.lower() in ("low", "medium", "high"):
        args["priority"] = named.lower()
    return args


def _number(raw: str) -> int | float:
    value = float(raw)
    return int(value) if value.is_integer() else value


def _last_user_text(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content or ""
    return ""


def _words(answer: str) -> list[ModelEvent]:
    return [TextDelta(w if i == 0 else " " + w) for i, w in enumerate(answer.split(" "))]
