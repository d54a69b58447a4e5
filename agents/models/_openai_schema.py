"""JSON schemas as OpenAI strict mode accepts them, and the way back for the values it returns.

OpenAI's strict mode (``"strict": true`` on a function tool or a ``json_schema`` response format)
accepts a subset of JSON Schema: every object lists all its properties in ``required`` and sets
``additionalProperties: false``; optional fields are expressed as nullable instead. So a pydantic
schema is rewritten before it is sent:

- every object gets ``additionalProperties: false`` and all its properties in ``required``; a
  property that was optional and did not accept ``null`` becomes ``anyOf: [<it>, {type: null}]``;
- ``title``, ``default`` and other annotations strict mode rejects are dropped, as are
  validation keywords it does not support (``minLength``…): the tool validates its input anyway;
- ``$defs`` stay at the root (nested ``$defs`` are hoisted), ``$ref`` with siblings is inlined,
  a one-element ``allOf`` is unwrapped, ``oneOf`` becomes ``anyOf``.

What cannot be expressed (free-form dicts, tuples, ``not``…) makes :func:`to_strict_schema`
return ``None``; :func:`prepare_schema` then sends the schema unchanged, non-strict. Nothing is
ever added to a schema beyond the rules above (no control fields).

Because strict mode makes the model send ``null`` for an optional field it wants to leave out,
:func:`drop_injected_nulls` removes those ``null`` values again, guided by the ORIGINAL schema,
so the tool sees the argument omitted and its default applies.
"""

from __future__ import annotations

import copy
from typing import Any

_DROPPED = frozenset(
    {
        "title", "default", "examples", "$comment", "$schema", "$id", "deprecated", "readOnly",
        "writeOnly", "discriminator", "minLength", "maxLength", "uniqueItems", "minProperties",
        "maxProperties", "contentMediaType", "contentEncoding", "contentSchema",
    }
)  # fmt: skip
_UNSUPPORTED = frozenset(
    {
        "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
        "dependentSchemas", "dependentRequired", "dependencies", "not", "if", "then", "else",
        "contains", "minContains", "maxContains", "prefixItems", "additionalItems", "definitions",
        "$dynamicRef", "$anchor",
    }
)  # fmt: skip
_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_JSON_TYPES: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
_MAX_DEPTH = 64


class _NotStrict(Exception):
    """The schema uses something strict mode cannot express."""


def prepare_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema to send and whether to send it with ``strict: true``.

    Example:
        >>> prepare_schema({"type": "object", "properties": {"id": {"type": "string"}}})[1]
        True
    """
    strict = to_strict_schema(schema)
    if strict is None:
        return copy.deepcopy(schema), False
    return strict, True


def to_strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A strict-mode-compatible copy of ``schema`` (an object schema), or ``None`` if impossible.

    Pure: ``schema`` is not modified.

    Example:
        >>> to_strict_schema({"type": "object", "properties": {"n": {"type": "integer",
        ...     "default": 1}}})  # doctest: +NORMALIZE_WHITESPACE
        {'type': 'object', 'properties': {'n': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}},
         'required': ['n'], 'additionalProperties': False}
    """
    try:
        root = copy.deepcopy(schema)
        defs = _hoist_defs(root, {}, 0)
        if set(root) == {"$ref"}:  # a recursive pydantic model: the root points into $defs
            root = copy.deepcopy(_resolve_ref(root["$ref"], defs))
        strict_root = _strict(root, defs, is_root=True, depth=0)
        if "object" not in _types(strict_root) or "anyOf" in strict_root:
            raise _NotStrict("the root must be an object")
        if defs:
            strict_root["$defs"] = {
                name: _strict(sub, defs, is_root=False, depth=1) for name, sub in defs.items()
            }
        return strict_root
    except (_NotStrict, RecursionError):
        return None


def _hoist_defs(node: Any, found: dict[str, Any], depth: int) -> dict[str, Any]:
    """Move every ``$defs`` (at any depth) into ``found``; refs already point at the root."""
    if depth > _MAX_DEPTH:
        raise _NotStrict("schema nested too deeply")
    if isinstance(node, list):
        for item in node:
            _hoist_defs(item, found, depth + 1)
    elif isinstance(node, dict):
        defs = node.pop("$defs", None)
        if defs is not None:
            if not isinstance(defs, dict):
                raise _NotStrict("$defs must be an object")
            for name, sub in defs.items():
                if name in found and found[name] != sub:
                    raise _NotStrict(f"two different $defs named {name!r}")
                found[name] = sub
            for sub in list(defs.values()):
                _hoist_defs(sub, found, depth + 1)
        for key, value in node.items():
            if key not in ("enum", "const"):
                _hoist_defs(value, found, depth + 1)
    return found


def _strict(raw: Any, defs: dict[str, Any], *, is_root: bool, depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        raise _NotStrict("schema nested too deeply")
    if not isinstance(raw, dict):
        raise _NotStrict(f"schema {raw!r} is not an object")
    node: dict[str, Any] = {k: v for k, v in raw.items() if k not in _DROPPED}
    if unsupported := _UNSUPPORTED.intersection(node):
        raise _NotStrict(f"unsupported keywords {sorted(unsupported)}")
    if node.get("format") is not None and node["format"] not in _FORMATS:
        del node["format"]
    if "oneOf" in node:
        if "anyOf" in node:
            raise _NotStrict("both oneOf and anyOf")
        node["anyOf"] = node.pop("oneOf")
    if "allOf" in node:
        parts = node.pop("allOf")
        if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
            raise _NotStrict("allOf with several parts")
        return _strict({**parts[0], **node}, defs, is_root=is_root, depth=depth + 1)
    if "$ref" in node:
        target = _resolve_ref(node["$ref"], defs)
        if len(node) == 1:
            return node
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _strict({**target, **rest}, defs, is_root=is_root, depth=depth + 1)
    if "anyOf" in node:
        variants = node["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise _NotStrict("anyOf must be a non-empty list")
        node["anyOf"] = [_strict(v, defs, is_root=False, depth=depth + 1) for v in variants]
        return node
    _ensure_type(node)
    types = _types(node)
    if "object" in types:
        _strict_object(node, defs, is_root=is_root, depth=depth)
    if "array" in types:
        items = node.get("items")
        if not isinstance(items, dict):
            raise _NotStrict("arrays need an items schema")
        node["items"] = _strict(items, defs, is_root=False, depth=depth + 1)
    return node


def _strict_object(
    node: dict[str, Any], defs: dict[str, Any], *, is_root: bool, depth: int
) -> None:
    extra = node.get("additionalProperties")
    if extra not in (None, False):
        raise _NotStrict("objects with free-form additional properties")
    properties = node.get("properties")
    if properties is None:
        if not (is_root or extra is False):
            raise _NotStrict("an object without properties accepts anything")
        properties = {}
    if not isinstance(properties, dict):
        raise _NotStrict("properties must be an object")
    required = set(node.get("required") or ())
    strict_properties = {}
    for name, sub in properties.items():
        strict_sub = _strict(sub, defs, is_root=False, depth=depth + 1)
        if name not in required and not _allows_null(strict_sub, defs, 0):
            strict_sub = _nullable(strict_sub)
        strict_properties[name] = strict_sub
    node["properties"] = strict_properties
    node["required"] = list(strict_properties)
    node["additionalProperties"] = False


def _ensure_type(node: dict[str, Any]) -> None:
    if "type" in node:
        return
    values = node["enum"] if isinstance(node.get("enum"), list) else None
    if values is None and "const" in node:
        values = [node["const"]]
    if values is None:
        if "properties" in node:
            node["type"] = "object"
            return
        raise _NotStrict("a schema without a type accepts anything")
    kinds = {"null" if v is None else _JSON_TYPES.get(type(v), "") for v in values}
    if "" in kinds or len(kinds - {"null"}) != 1:
        raise _NotStrict("enum values of mixed or unknown types")
    (kind,) = kinds - {"null"}
    node["type"] = [kind, "null"] if "null" in kinds else kind


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in node:
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    description = node.get("description")
    inner = {k: v for k, v in node.items() if k != "description"}
    wrapped: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _allows_null(node: Any, defs: dict[str, Any], depth: int) -> bool:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return False
    if "$ref" in node:
        try:
            return _allows_null(_resolve_ref(node["$ref"], defs), defs, depth + 1)
        except _NotStrict:
            return False
    if "null" in _types(node) or ("const" in node and node["const"] is None):
        return True
    if isinstance(node.get("enum"), list) and None in node["enum"]:
        return True
    variants = [*(node.get("anyOf") or ()), *(node.get("oneOf") or ())]
    return any(_allows_null(v, defs, depth + 1) for v in variants)


def _resolve_ref(ref: Any, defs: dict[str, Any]) -> dict[str, Any]:
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix) or ref[len(prefix) :] not in defs:
        raise _NotStrict(f"unresolvable $ref {ref!r}")
    target = defs[ref[len(prefix) :]]
    if not isinstance(target, dict):
        raise _NotStrict(f"$ref {ref!r} is not a schema")
    return target


def drop_injected_nulls(value: Any, schema: dict[str, Any]) -> Any:
    """Remove the ``null`` values strict mode made the model send for optional fields.

    ``schema`` is the ORIGINAL schema (before :func:`to_strict_schema`): a ``null`` is dropped
    where the property is optional there and does not accept ``null``, so the default applies.

    Example:
        >>> schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}
        >>> drop_injected_nulls({"n": None}, schema)
        {}
    """
    try:
        defs = _hoist_defs(copy.deepcopy(schema), {}, 0)
    except _NotStrict:
        return value
    return _drop(value, schema, defs, 0)


def _drop(value: Any, node: Any, defs: dict[str, Any], depth: int) -> Any:
    node = _flatten(node, defs, depth)
    if node is None:
        return value
    if isinstance(value, dict):
        if isinstance(node.get("properties"), dict):
            return _drop_in_object(value, node, defs, depth)
        variant = _pick_variant(value, node, defs, depth)
        return value if variant is None else _drop(value, variant, defs, depth + 1)
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            return [_drop(item, items, defs, depth + 1) for item in value]
        arrays = [v for v in _variants(node, defs, depth) if isinstance(v.get("items"), dict)]
        if len(arrays) == 1:
            return [_drop(item, arrays[0]["items"], defs, depth + 1) for item in value]
    return value


def _drop_in_object(
    value: dict[str, Any], node: dict[str, Any], defs: dict[str, Any], depth: int
) -> dict[str, Any]:
    properties: dict[str, Any] = node["properties"]
    required = set(node.get("required") or ())
    result: dict[str, Any] = {}
    for key, item in value.items():
        sub = properties.get(key)
        if sub is None:
            result[key] = item
        elif item is None and key not in required and not _allows_null(sub, defs, 0):
            continue
        else:
            result[key] = _drop(item, sub, defs, depth + 1)
    return result


def _flatten(node: Any, defs: dict[str, Any], depth: int) -> dict[str, Any] | None:
    """Follow ``$ref`` and one-element ``allOf`` so the node's own keywords are visible."""
    for _ in range(_MAX_DEPTH - depth):
        if not isinstance(node, dict):
            return None
        if "$ref" in node:
            try:
                target = _resolve_ref(node["$ref"], defs)
            except _NotStrict:
                return None
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        elif isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            node = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
        else:
            return node
    return None


def _variants(node: dict[str, Any], defs: dict[str, Any], depth: int) -> list[dict[str, Any]]:
    found = []
    for variant in [*(node.get("anyOf") or ()), *(node.get("oneOf") or ())]:
        flat = _flatten(variant, defs, depth + 1)
        if flat is not None:
            found.append(flat)
    return found


def _pick_variant(
    value: dict[str, Any], node: dict[str, Any], defs: dict[str, Any], depth: int
) -> dict[str, Any] | None:
    """The object variant of a union ``value`` fits: its keys are known, its consts match."""
    objects = [v for v in _variants(node, defs, depth) if isinstance(v.get("properties"), dict)]
    for variant in objects:
        properties = variant["properties"]
        if not set(value) <= set(properties):
            continue
        consts = {
            k: flat["const"]
            for k, sub in properties.items()
            if (flat := _flatten(sub, defs, depth + 1)) is not None and "const" in flat
        }
        if all(value.get(k) == v for k, v in consts.items() if k in value):
            return variant
    return None
