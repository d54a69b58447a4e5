"""Modal forms generated from a tool's pydantic schema (input schema for "Edit", resume
schema for "Provide details"): JSON schema → Block Kit inputs, submitted state → data, and
validation errors → the block ids Slack shows them under.

Field kinds: ``string`` → plain text input, ``integer``/``number`` → number input,
``boolean`` → a Yes/No select, ``enum`` (and ``Literal``) → a select. Any other type (objects,
arrays, unions) is a multiline text input holding JSON, so every field stays editable;
invalid JSON is reported under that field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from slack_sdk.models.blocks import (
    Block,
    InputBlock,
    MarkdownTextObject,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

import bot.slack._messages as msg
from bot.slack.blocks._args import as_json, same_value
from bot.slack.blocks._mrkdwn import code_block, escape_truncated

FIELD_PREFIX = "field:"
"""``block_id`` of a field's input: ``field:<name>``."""
VALUE_ACTION = "value"
"""``action_id`` of every input element."""
MAX_FIELDS = 90
"""A modal holds 100 blocks; fields beyond this keep their current value."""
PREFILL_LIMIT = 3000
"""Slack's limit on a text input's ``initial_value``: a longer value is shown read-only."""

Kind = Literal["text", "integer", "number", "boolean", "enum", "json"]


@dataclass(frozen=True, kw_only=True)
class FormField:
    """One field of a generated form."""

    name: str
    label: str
    kind: Kind
    required: bool
    hint: str | None = None
    options: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    @property
    def block_id(self) -> str:
        return FIELD_PREFIX + self.name


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The fields of an object JSON schema (``Model.model_json_schema()``), in order."""
    defs = schema.get("$defs") or {}
    required = set(schema.get("required") or ())
    fields = []
    for name, raw in list((schema.get("properties") or {}).items())[:MAX_FIELDS]:
        prop, nullable = _resolve(raw, defs)
        kind = _kind(prop)
        hint = str(raw.get("description") or prop.get("description") or "")
        fields.append(
            FormField(
                name=name,
                label=_limit(str(raw.get("title") or prop.get("title") or name), 2000),
                kind=kind,
                required=name in required and not nullable,
                hint=_limit(hint, 2000) or None,
                options=_options(kind, prop),
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
            )
        )
    return fields


def _options(kind: Kind, prop: dict[str, Any]) -> tuple[Any, ...]:
    if kind == "boolean":
        return (True, False)
    if kind == "enum":
        return tuple(prop["enum"]) if "enum" in prop else (prop["const"],)
    return ()


def _resolve(prop: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Follow ``$ref``/``allOf``; unwrap ``anyOf [X, null]``. Returns (schema, nullable)."""
    nullable = False
    for _ in range(8):
        if "$ref" in prop:
            prop = defs.get(str(prop["$ref"]).rsplit("/", 1)[-1], {})
        elif len(prop.get("allOf") or ()) == 1:
            prop = prop["allOf"][0]
        elif "anyOf" in prop:
            others = [p for p in prop["anyOf"] if p.get("type") != "null"]
            nullable = nullable or len(others) < len(prop["anyOf"])
            if len(others) != 1:
                return prop, nullable
            prop = others[0]
        else:
            break
    return prop, nullable


def _kind(prop: dict[str, Any]) -> Kind:
    if "const" in prop:
        return "enum"
    enum = prop.get("enum")
    if enum and all(isinstance(v, (str, int, float)) for v in enum) and len(enum) <= 100:
        return "enum"
    kinds: dict[str, Kind] = {
        "string": "text",
        "integer": "integer",
        "number": "number",
        "boolean": "boolean",
    }
    return kinds.get(str(prop.get("type")), "json")


def form_blocks(fields: list[FormField], values: dict[str, Any]) -> list[Block]:
    """One input block per field, prefilled from ``values``; a value too long to prefill is
    shown read-only (a section, not an input) and kept as it is on submit."""
    return [
        _read_only(f, values[f.name])
        if f.name in values and _too_long(f, values[f.name])
        else InputBlock(
            block_id=f.block_id,
            label=PlainTextObject(text=_limit(f.label, 2000)),
            hint=PlainTextObject(text=f.hint) if f.hint else None,
            optional=not f.required,
            element=_element(f, values.get(f.name)),
        )
        for f in fields
    ]


def _prefill(f: FormField, value: Any) -> str:
    if f.kind == "json":
        return json.dumps(value, indent=2, ensure_ascii=False)
    return str(value)


def _too_long(f: FormField, value: Any) -> bool:
    return f.kind in ("text", "json") and len(_prefill(f, value)) > PREFILL_LIMIT


def _read_only(f: FormField, value: Any) -> SectionBlock:
    text = _prefill(f, value)
    label = escape_truncated(f.label, 200)
    note = msg.FORM_KEPT.format(length=len(text))
    return SectionBlock(
        block_id=f.block_id,
        text=MarkdownTextObject(text=f"*{label}*\n{code_block(as_json(value), 2000)}\n{note}"),
    )


def _element(f: FormField, value: Any) -> Any:
    if f.kind in ("integer", "number"):
        return NumberInputElement(
            action_id=VALUE_ACTION,
            is_decimal_allowed=f.kind == "number",
            initial_value=None if value is None else str(value),
            min_value=None if f.minimum is None else str(f.minimum),
            max_value=None if f.maximum is None else str(f.maximum),
        )
    if f.kind in ("enum", "boolean"):
        options = [_option(f, o) for o in (f.options or ())]
        initial = next((o for o, v in zip(options, f.options, strict=True) if v == value), None)
        return StaticSelectElement(
            action_id=VALUE_ACTION,
            placeholder=PlainTextObject(text=msg.FORM_CHOOSE),
            options=options,
            initial_option=initial,
        )
    if f.kind == "json":
        text = None if value is None else json.dumps(value, indent=2, ensure_ascii=False)
        return PlainTextInputElement(action_id=VALUE_ACTION, multiline=True, initial_value=text)
    text = None if value is None else str(value)
    return PlainTextInputElement(action_id=VALUE_ACTION, initial_value=text)


def _option(f: FormField, value: Any) -> Option:
    if f.kind == "boolean":
        label = msg.FORM_YES if value else msg.FORM_NO
    else:
        label = _limit(str(value), 75)
    return Option(value=json.dumps(value), text=PlainTextObject(text=label))


def read_form(
    fields: list[FormField], state: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The submitted data by field name, and errors by block id (unparseable numbers, JSON)."""
    data: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in fields:
        entry = (state.get(f.block_id) or {}).get(VALUE_ACTION) or {}
        selected = entry.get("selected_option")
        raw = selected.get("value") if isinstance(selected, dict) else entry.get("value")
        if raw is None or raw == "":
            continue
        try:
            data[f.name] = _parse(f, str(raw))
        except ValueError:
            errors[f.block_id] = msg.FORM_NOT_JSON if f.kind == "json" else msg.FORM_NOT_A_NUMBER
    return data, errors


def _parse(f: FormField, raw: str) -> Any:
    if f.kind in ("enum", "boolean", "json"):
        return json.loads(raw)
    if f.kind == "integer":
        return int(raw)
    if f.kind == "number":
        return int(raw) if re.fullmatch(r"-?\d+", raw.strip()) else float(raw)
    return raw


def read_edit(
    fields: list[FormField], state: dict[str, Any], original: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The arguments an Edit form submits: ``original`` with only the values the approver
    changed. A field not in the form (read-only, beyond ``MAX_FIELDS``) keeps its value, an
    unchanged one keeps its exact JSON value (``250`` stays ``250``), a cleared one is removed.
    """
    data, errors = read_form(fields, state)
    args = dict(original)
    for f in fields:
        if f.block_id not in state:
            continue
        if f.name not in data:
            args.pop(f.name, None)
        elif f.name not in original or not _unchanged(f, original[f.name], data[f.name]):
            args[f.name] = data[f.name]
    return args, errors


def _unchanged(f: FormField, before: Any, after: Any) -> bool:
    if f.kind == "text" and not isinstance(before, str):
        return str(before) == str(after)
    return same_value(before, after)


def validate(
    model: type[BaseModel] | None, fields: list[FormField], data: dict[str, Any]
) -> dict[str, str]:
    """Errors by block id when ``data`` does not validate against ``model`` (none if valid)."""
    if model is None:
        return {}
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return errors_by_block(fields, exc.errors(include_url=False))
    return {}


def errors_by_block(fields: list[FormField], errors: list[Any]) -> dict[str, str]:
    """Map pydantic-style errors (``loc``, ``msg``) to field blocks; others go to the first."""
    names = {f.name: f.block_id for f in fields}
    out: dict[str, str] = {}
    for error in errors:
        loc = list(error.get("loc") or ())
        block = names.get(str(loc[0])) if loc else None
        block = block or (fields[0].block_id if fields else None)
        if block is not None and block not in out:
            out[block] = _limit(str(error.get("msg") or "invalid"), 200)
    return out


def _limit(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
