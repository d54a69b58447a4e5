"""The schema → form generator: field kinds, prefill, reading the state back, errors by block."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from bot.slack.blocks._blocks import as_dicts
from bot.slack.blocks._forms import (
    MAX_FIELDS,
    errors_by_block,
    form_blocks,
    form_fields,
    read_form,
    validate,
)


class Color(StrEnum):
    red = "red"
    blue = "blue"


class Address(BaseModel):
    city: str


class Everything(BaseModel):
    name: str = Field(title="Full name", description="Who")
    count: int = Field(ge=1, le=10)
    ratio: float | None = None
    enabled: bool = False
    color: Color
    level: Literal["low", "high"] = "low"
    tags: list[str] = []
    address: Address | None = None


def _fields() -> dict[str, Any]:
    return {f.name: f for f in form_fields(Everything.model_json_schema())}


def test_each_json_schema_type_gets_its_input_kind() -> None:
    kinds = {name: f.kind for name, f in _fields().items()}
    assert kinds == {
        "name": "text",
        "count": "integer",
        "ratio": "number",
        "enabled": "boolean",
        "color": "enum",
        "level": "enum",
        "tags": "json",
        "address": "json",
    }
    fields = _fields()
    assert fields["name"].label == "Full name" and fields["name"].hint == "Who"
    assert [n for n, f in fields.items() if f.required] == ["name", "count", "color"]
    assert fields["color"].options == ("red", "blue")
    assert (fields["count"].minimum, fields["count"].maximum) == (1, 10)


def test_blocks_are_prefilled_and_valid_block_kit() -> None:
    fields = list(_fields().values())
    values = {
        "name": "Ada",
        "count": 3,
        "enabled": True,
        "color": "blue",
        "tags": ["a"],
        "address": {"city": "Paris"},
    }
    blocks = {b["block_id"]: b["element"] for b in as_dicts(form_blocks(fields, values))}
    assert blocks["field:name"]["initial_value"] == "Ada"
    assert blocks["field:count"]["initial_value"] == "3"
    assert "initial_value" not in blocks["field:ratio"]
    assert blocks["field:enabled"]["initial_option"]["text"]["text"] == "Yes"
    assert blocks["field:color"]["initial_option"]["value"] == '"blue"'
    assert "initial_option" not in blocks["field:level"]
    assert json.loads(blocks["field:tags"]["initial_value"]) == ["a"]
    assert blocks["field:address"]["multiline"] is True


def test_submitted_state_is_read_back_into_typed_data() -> None:
    fields = list(_fields().values())
    state = {
        "field:name": {"value": {"type": "plain_text_input", "value": "Ada"}},
        "field:count": {"value": {"type": "number_input", "value": "4"}},
        "field:ratio": {"value": {"type": "number_input", "value": "0.25"}},
        "field:enabled": {
            "value": {"type": "static_select", "selected_option": {"value": "false"}}
        },
        "field:color": {"value": {"type": "static_select", "selected_option": {"value": '"red"'}}},
        "field:level": {"value": {"type": "static_select", "selected_option": None}},
        "field:tags": {"value": {"type": "plain_text_input", "value": '["x", "y"]'}},
        "field:address": {"value": {"type": "plain_text_input", "value": None}},
    }
    data, errors = read_form(fields, state)
    assert errors == {}
    assert data == {
        "name": "Ada",
        "count": 4,
        "ratio": 0.25,
        "enabled": False,
        "color": "red",
        "tags": ["x", "y"],
    }
    assert validate(Everything, fields, data) == {}


def test_unparseable_values_and_validation_errors_land_under_their_field() -> None:
    fields = list(_fields().values())
    state = {
        "field:count": {"value": {"type": "number_input", "value": "many"}},
        "field:tags": {"value": {"type": "plain_text_input", "value": "[oops"}},
    }
    _, errors = read_form(fields, state)
    assert set(errors) == {"field:count", "field:tags"}
    invalid = validate(Everything, fields, {"name": "Ada", "count": 11, "color": "green"})
    assert set(invalid) == {"field:count", "field:color"}
    assert errors_by_block(fields, [{"loc": [], "msg": "whole model wrong"}]) == {
        "field:name": "whole model wrong"
    }


def test_a_huge_schema_fits_a_modal() -> None:
    big = create_model("Big", **{f"f{i}": (str, ...) for i in range(150)})  # type: ignore[call-overload]
    fields = form_fields(big.model_json_schema())
    assert len(fields) == MAX_FIELDS
    assert len(as_dicts(form_blocks(fields, {}))) <= 99
