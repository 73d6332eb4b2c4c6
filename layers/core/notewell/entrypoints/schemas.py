"""Lean JSON Schemas for tools/list: every agent pays for the tool list at every session start.

Pydantic's schemas carry what a model cannot use: a `title` on every field, `anyOf [T, null]` with
`default: null` for each optional argument, `$ref`s into `$defs`, and docstring indentation. What a model needs
to call a tool correctly stays: types, enums, bounds, non-null defaults, required names and descriptions.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

_SPACE = re.compile(r"\s+")
# Schema keywords whose value is a map of names to schemas, or a list of schemas, or one schema.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not")


def one_line(text: str) -> str:
    """A docstring or description as one line: indentation and line breaks cost tokens and say nothing."""
    return _SPACE.sub(" ", inspect.cleandoc(text)).strip()


def lean_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema a model reads: same constraints, no generated noise, `$ref`s inlined."""
    definitions: dict[str, Any] = schema.get("$defs", {})
    return _lean(schema, definitions)


def _resolve(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A `$ref` replaced by its definition; keywords beside the `$ref` (description, default) win."""
    while "$ref" in schema:
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        definition = definitions[schema["$ref"].rsplit("/", 1)[-1]]
        schema = {**definition, **siblings}
    return schema


def _lean(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    schema = _resolve(schema, definitions)
    options = schema.get("anyOf")
    if options is not None and len(options) == 2 and {"type": "null"} in options:
        # An optional argument: absent means null, so the model needs only the non-null form.
        (present,) = [option for option in options if option != {"type": "null"}]
        merged = {**{k: v for k, v in schema.items() if k != "anyOf"}, **_resolve(present, definitions)}
        if merged.get("default", 0) is None:
            del merged["default"]
        schema = merged
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "$defs", "definitions"):
            continue
        if key in _SCHEMA_MAPS:
            lean[key] = {name: _lean(item, definitions) for name, item in value.items()}
        elif key in _SCHEMA_LISTS:
            lean[key] = [_lean(item, definitions) for item in value]
        elif key in _SCHEMA_ONE and isinstance(value, dict):
            lean[key] = _lean(value, definitions)
        elif key == "description":
            lean[key] = one_line(value)
        else:
            lean[key] = value
    return lean
