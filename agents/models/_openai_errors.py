"""Turning the ``openai`` client's exceptions into one clear ``ModelError``.

The client has already retried what is worth retrying (408, 409, 429, 5xx, connection errors,
with backoff and ``retry-after``) by the time an exception reaches us, so the error is final.
"""

from __future__ import annotations

import logging

import openai

from agents.errors import ModelError

log = logging.getLogger(__name__)

_RETRIED = frozenset({408, 409, 429})
_PEOPLE_HINTS = {
    401: "the model API refused the key: an admin should check OPENAI_API_KEY",
    403: "the API key may not use this model: an admin should check OPENAI_API_KEY and "
    "OPENAI_MODEL",
    404: "the model was not found: an admin should check OPENAI_MODEL and OPENAI_BASE_URL",
    429: "the model API is rate limited or out of quota: try again later",
}
"""What the thread is told to fix, by status (``ModelError.hint``)."""
_HINTS = {
    400: "the request was rejected; if it names a tool schema, check the tool's input model",
    401: "check OPENAI_API_KEY",
    403: "the API key may not use this model or project",
    404: "check the model name (OPENAI_MODEL or 'openai/<model>') and OPENAI_BASE_URL",
    429: "rate limited or out of quota; retry the run later",
}


def to_model_error(
    exc: openai.OpenAIError,
    *,
    model: str,
    max_retries: int,
    base_url: str,
    api_key: str | None,
    request_id: str | None = None,
) -> ModelError:
    """The ``ModelError`` for a final ``openai`` failure; never contains the API key."""
    status: int | None = None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        request_id = exc.request_id or request_id
        message = f"the model {model!r} failed: {_detail(exc)}"
        if status in _RETRIED or status >= 500:
            message += f" (gave up after {max_retries} retries)"
        if hint := _HINTS.get(status):
            message += f"; {hint}"
    elif isinstance(exc, openai.APITimeoutError):
        message = f"the model {model!r} timed out (gave up after {max_retries} retries)"
    elif isinstance(exc, openai.APIConnectionError):
        message = (
            f"could not reach the model API at {base_url} (gave up after {max_retries} retries); "
            "check OPENAI_BASE_URL and that the server is running"
        )
    elif isinstance(exc, openai.APIError):
        message = f"the model {model!r} failed while streaming: {_detail(exc)}"
    else:
        message = f"the model {model!r} could not be called: {exc}"
    message = _redact(message, api_key)
    log.warning("model request failed: model=%s status=%s request_id=%s", model, status, request_id)
    hint = _PEOPLE_HINTS.get(status) if status is not None else None
    return ModelError(message, status=status, request_id=request_id, hint=hint)


def _detail(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return str(body["message"])
    return exc.message


def _redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 8:
        return text.replace(secret, "[redacted]")
    return text
