"""The strict-mode schema rewrite (a pure function) and the way back for returned values."""

from __future__ import annotations

import copy
import enum
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.models._openai_schema import drop_injected_nulls, prepare_schema, to_strict_schema
from tests.fakes.openai_server import strict_schema_problems


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    """An inner model."""

    a: int
    b: str = "x"


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]


class Everything(BaseModel):
    inner: Inner = Field(description="the inner one")
    maybe: Inner | None = None
    color: Color = Color.RED
    tags: list[str] = []
    items: list[Inner]
    n: int | None = None
    pet: Cat | Dog = Field(discriminator="kind")
    name: str = Field(min_length=1, max_length=20, title="Custom title")


def strict(model: type[BaseModel]) -> dict[str, Any]:
    schema = to_strict_schema(model.model_json_schema())
    assert schema is not None
    return schema


def accepted(schema: dict[str, Any]) -> list[str]:
    """What OpenAI would reject (the fake's checker), for a strict function tool."""
    tool = {"type": "function", "function": {"name": "t", "parameters": schema, "strict": True}}
    return strict_schema_problems({"tools": [tool]})


def keywords(node: Any, found: set[str] | None = None) -> set[str]:
    """Every keyword used at a schema position (property names excluded)."""
    found = set() if found is None else found
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    keywords(sub, found)
            elif key in ("items",):
                keywords(value, found)
            elif key == "anyOf":
                for sub in value:
                    keywords(sub, found)
    return found


def test_every_object_is_closed_and_lists_all_properties_as_required() -> None:
    schema = strict(Everything)

    assert accepted(schema) == []
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    assert schema["$defs"]["Cat"]["required"] == ["kind", "lives"]
    assert schema["$defs"]["Inner"]["additionalProperties"] is False


def test_optional_fields_become_nullable_and_required_ones_stay_as_they_are() -> None:
    props = strict(Everything)["properties"]

    assert props["tags"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    }
    assert props["color"] == {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}]}
    assert props["maybe"] == {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}]}
    assert props["n"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}  # already nullable
    assert props["items"] == {"type": "array", "items": {"$ref": "#/$defs/Inner"}}


def test_enums_keep_their_values() -> None:
    assert strict(Everything)["$defs"]["Color"] == {"type": "string", "enum": ["red", "blue"]}


def test_ref_with_a_description_is_inlined_because_strict_rejects_siblings() -> None:
    inner = strict(Everything)["properties"]["inner"]

    assert "$ref" not in inner
    assert inner["description"] == "the inner one"
    assert inner["required"] == ["a", "b"]
    assert inner["additionalProperties"] is False


def test_discriminated_union_becomes_any_of() -> None:
    pet = strict(Everything)["properties"]["pet"]

    assert pet == {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}


def test_titles_defaults_and_unsupported_validation_keywords_are_dropped_nothing_added() -> None:
    schema = strict(Everything)
    used = keywords(schema)

    assert not used & {"title", "default", "minLength", "maxLength", "discriminator", "oneOf"}
    allowed = {"type", "properties", "required", "additionalProperties", "items", "anyOf",
               "$ref", "$defs", "enum", "const", "description"}  # fmt: skip
    assert used <= allowed


def test_the_input_is_not_modified() -> None:
    original = Everything.model_json_schema()
    before = copy.deepcopy(original)

    to_strict_schema(original)
    drop_injected_nulls({"n": None}, original)

    assert original == before


def test_a_strict_schema_is_left_unchanged() -> None:
    schema = strict(Everything)

    assert to_strict_schema(schema) == schema


def test_a_tool_without_parameters_gets_an_empty_closed_object() -> None:
    assert to_strict_schema({"type": "object"}) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_what_strict_cannot_express_is_sent_unchanged_and_non_strict() -> None:
    class FreeForm(BaseModel):
        meta: dict[str, Any]

    class Pair(BaseModel):
        pair: tuple[int, str]

    class Anything(BaseModel):
        value: Any

    for model in (FreeForm, Pair, Anything):
        schema = model.model_json_schema()
        assert to_strict_schema(schema) is None, model
        assert prepare_schema(schema) == (schema, False)
    assert to_strict_schema({"type": "string"}) is None  # the root must be an object


def test_nested_defs_are_hoisted_to_the_root() -> None:
    schema = {
        "type": "object",
        "properties": {"data": {"anyOf": [Everything.model_json_schema(), {"type": "null"}]}},
        "required": ["data"],
    }

    result = to_strict_schema(schema)

    assert result is not None
    assert accepted(result) == []
    assert set(result["$defs"]) == {"Cat", "Color", "Dog", "Inner"}


def test_conflicting_nested_defs_fall_back_to_non_strict() -> None:
    one = {"$defs": {"X": {"type": "string"}}, "type": "object",
           "properties": {"x": {"$ref": "#/$defs/X"}}}  # fmt: skip
    two = {"$defs": {"X": {"type": "integer"}}, "type": "object",
           "properties": {"x": {"$ref": "#/$defs/X"}}}  # fmt: skip
    schema = {"type": "object", "properties": {"one": one, "two": two}}

    assert to_strict_schema(schema) is None


def test_recursive_models_keep_their_refs() -> None:
    class Node(BaseModel):
        value: int
        children: list[Node] = []

    schema = strict(Node)

    assert accepted(schema) == []
    assert schema["properties"]["children"]["anyOf"][0]["items"] == {"$ref": "#/$defs/Node"}


def test_injected_nulls_are_dropped_where_the_original_field_was_optional() -> None:
    value = {
        "inner": {"a": 1, "b": None},
        "maybe": None,
        "color": None,
        "tags": None,
        "items": [{"a": 2, "b": None}],
        "n": None,
        "pet": {"kind": "cat", "lives": None},
        "name": "x",
    }

    cleaned = drop_injected_nulls(value, Everything.model_json_schema())

    assert cleaned == {
        "inner": {"a": 1},
        "maybe": None,  # Optional: null is a real value
        "items": [{"a": 2}],
        "n": None,
        "pet": {"kind": "cat"},
        "name": "x",
    }
    assert Everything.model_validate(cleaned).pet == Cat(kind="cat", lives=9)


def test_required_nulls_and_unknown_keys_are_left_for_validation_to_judge() -> None:
    schema = Inner.model_json_schema()

    assert drop_injected_nulls({"a": None, "zzz": None}, schema) == {"a": None, "zzz": None}
    assert drop_injected_nulls(["not", "an", "object"], schema) == ["not", "an", "object"]
