"""Reading ``/api`` input: JSON bodies and query strings into the pydantic models, or a 400.

Everything a client can send is refused here with a ``Problem`` (a 4xx with a stable code)
before it reaches the runtime: malformed JSON, ``NaN``/``Infinity``, nesting deeper than
``API_JSON_DEPTH`` (checked on the raw text, before parsing), strings that are not valid
Unicode (JSON's ``"\\ud800"``), and anything that does not validate against the request model.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

import bot.api._errors as api_errors
from bot._json_limits import API_JSON_DEPTH, too_deep

_Model = TypeVar("_Model", bound=BaseModel)


class Problem(Exception):
    """An error answer decided by the API itself (bad input, unknown agent…)."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"code": code, "message": message, **extra}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def json_body(request: web.Request) -> Any:
    """The parsed JSON body (any shape; ``parse`` checks it), or a 400 ``MALFORMED_JSON``."""
    raw = await request.read()
    if too_deep(raw.decode("utf-8", errors="replace"), limit=API_JSON_DEPTH):
        raise Problem(
            400,
            api_errors.MALFORMED_JSON,
            f"the body nests objects and arrays more than {API_JSON_DEPTH} levels deep; "
            "send a flatter body",
        )
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise Problem(
            400, api_errors.MALFORMED_JSON, f"the body must be a JSON object: {_short(exc)}"
        ) from None
    bad = _lone_surrogate(data)
    if bad is not None:
        raise Problem(
            400,
            api_errors.INVALID_REQUEST,
            "the body holds a string with an unpaired UTF-16 surrogate: send valid Unicode",
            errors=[{"loc": bad, "msg": "unpaired surrogate", "type": "string_unicode"}],
        )
    return data


def _lone_surrogate(data: Any) -> list[str | int] | None:
    """Where the first string that is not valid Unicode is (JSON allows ``"\\ud800"``)."""
    todo: list[tuple[list[str | int], Any]] = [([], data)]
    while todo:
        loc, value = todo.pop()
        if isinstance(value, str):
            if not _valid_unicode(value):
                return loc
        elif isinstance(value, dict):
            for key, item in value.items():
                if not _valid_unicode(key):
                    return loc
                todo.append(([*loc, key], item))
        elif isinstance(value, list):
            todo.extend(([*loc, i], item) for i, item in enumerate(value))
    return None


def _valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse(model: type[_Model], data: Any) -> _Model:
    """``data`` validated as ``model``, or a 400 ``INVALID_REQUEST`` listing every error."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        issues = [
            {
                "loc": [p if isinstance(p, int) else str(p) for p in e["loc"]],
                "msg": e["msg"],
                "type": e["type"],
            }
            for e in exc.errors(include_url=False, include_input=False, include_context=False)
        ]
        raise Problem(
            400,
            api_errors.INVALID_REQUEST,
            f"invalid {model.__name__}: "
            + "; ".join(f"{'.'.join(map(str, i['loc'])) or '(body)'}: {i['msg']}" for i in issues),
            errors=issues,
        ) from None


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"
