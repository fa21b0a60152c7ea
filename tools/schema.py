"""Turns marshmallow schemas into the JSON Schema sent to models and rendered as forms."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import marshmallow
from marshmallow import fields, validate

_TYPES: list[tuple[type[fields.Field], dict[str, Any]]] = [
    (fields.Url, {"type": "string", "format": "uri"}),
    (fields.Email, {"type": "string", "format": "email"}),
    (fields.String, {"type": "string"}),
    (fields.Integer, {"type": "integer"}),
    (fields.Number, {"type": "number"}),
    (fields.Boolean, {"type": "boolean"}),
    (fields.List, {"type": "array"}),
    (fields.Nested, {"type": "object"}),
    (fields.Dict, {"type": "object"}),
]


def json_schema(schema: type[marshmallow.Schema] | marshmallow.Schema) -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12 subset) of a marshmallow schema."""
    instance = schema() if isinstance(schema, type) else schema
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in instance.fields.items():
        if field.dump_only:
            continue
        key = field.data_key or name
        properties[key] = field_schema(field)
        if field.required:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def field_schema(field: fields.Field) -> dict[str, Any]:
    """Return the JSON Schema of one marshmallow field."""
    out: dict[str, Any] = {}
    for kind, base in _TYPES:
        if isinstance(field, kind):
            out.update(base)
            break
    if isinstance(field, fields.List):
        out["items"] = field_schema(field.inner)
    elif isinstance(field, fields.Nested):
        out = json_schema(field.schema)
    for validator in _validators(field):
        _apply_validator(out, validator)
    metadata = field.metadata
    for key in ("title", "description"):
        if key in metadata:
            out[key] = metadata[key]
    if metadata.get("secret"):
        out["writeOnly"] = True
    if "show_when" in metadata:
        out["x-show-when"] = metadata["show_when"]
    default = field.load_default
    if default is not marshmallow.missing and not callable(default):
        out["default"] = default
    if field.allow_none and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def _validators(field: fields.Field) -> list[Any]:
    return list(getattr(field, "validators", []) or [])


def _apply_validator(out: dict[str, Any], validator: Any) -> None:
    is_array = out.get("type") == "array"
    if isinstance(validator, validate.Length):
        low, high = ("minItems", "maxItems") if is_array else ("minLength", "maxLength")
        if validator.equal is not None:
            out[low] = out[high] = validator.equal
        if validator.min is not None:
            out[low] = validator.min
        if validator.max is not None:
            out[high] = validator.max
    elif isinstance(validator, validate.Range):
        if validator.min is not None:
            out["exclusiveMinimum" if not validator.min_inclusive else "minimum"] = validator.min
        if validator.max is not None:
            out["exclusiveMaximum" if not validator.max_inclusive else "maximum"] = validator.max
    elif isinstance(validator, validate.OneOf):
        target = out["items"] if is_array else out
        target["enum"] = list(validator.choices)
        labels = list(getattr(validator, "labels", []) or [])
        if labels and any(labels):
            target["x-enum-labels"] = labels


@lru_cache(maxsize=256)
def cached_json_schema(schema: type[marshmallow.Schema] | marshmallow.Schema) -> dict[str, Any]:
    """Return ``json_schema(schema)``, derived once per schema (a plugin loaded again brings
    new classes, and so new entries)."""
    return json_schema(schema)
