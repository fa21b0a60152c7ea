"""Stored plugin options and user settings: masking secrets, merging a save into what is kept,
and the check every key sent in an HTTP header passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow


def _fields(schema: type[marshmallow.Schema]) -> dict[str, Any]:
    return {field.data_key or name: field for name, field in schema().fields.items()}


def secret_fields(schema: type[marshmallow.Schema]) -> list[str]:
    """Return the keys of the schema's secret fields."""
    return [key for key, field in _fields(schema).items() if field.metadata.get("secret")]


def mask(schema: type[marshmallow.Schema] | None, values: dict[str, Any]) -> tuple[dict, dict]:
    """Return ``values`` without secrets, and ``{secret field: whether a value is stored}``."""
    if schema is None:
        return dict(values), {}
    secrets = secret_fields(schema)
    shown = {k: v for k, v in values.items() if k not in secrets}
    return shown, {key: bool(values.get(key)) for key in secrets}


def merge_save(
    schema: type[marshmallow.Schema], stored: dict[str, Any], submitted: dict[str, Any]
) -> dict[str, Any]:
    """Return what to validate for a save: ``submitted``, with kept secrets filled in.

    A secret left out or blank keeps the stored value. When a field that another field's
    ``show_when`` depends on changes (such as ``engine``), the dependent fields' stored
    values are dropped unless the save gives new ones, so a key is never sent to an engine
    it was not given for.
    """
    fields = _fields(schema)
    merged = {k: v for k, v in submitted.items() if not (_is_blank(v) and _secret(fields, k))}
    changed = {key for key in fields if key in submitted and submitted.get(key) != stored.get(key)}
    for key, field in fields.items():
        if not field.metadata.get("secret") or key in merged:
            continue
        depends_on = set((field.metadata.get("show_when") or {}).keys())
        if depends_on & changed:
            continue
        if stored.get(key):
            merged[key] = stored[key]
    return merged


def _secret(fields: dict[str, Any], key: str) -> bool:
    field = fields.get(key)
    return bool(field is not None and field.metadata.get("secret"))


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def header_unsafe_character(key: str | None) -> str | None:
    """Return the first character of ``key`` an HTTP header cannot carry, or None.

    A header carries printable ASCII alone: httpx refuses anything else, and requests sends
    "é" as one Latin-1 byte (which no engine reads as the key typed) and fails on "€".
    """
    if not key or (key.isascii() and key.isprintable()):  # printable ASCII: " " to "~"
        return None
    return next((c for c in key if not " " <= c <= "~"), None)


def header_unsafe_sentence(odd: str, key: str = "The API key") -> str:
    """Return the sentence saying ``key`` holds ``odd``, which an HTTP header cannot carry."""
    return (
        f"{key} holds {odd!r}, which an HTTP header cannot carry: a key is ASCII letters, "
        "digits and punctuation."
    )


def header_safe_key(page: str) -> Callable[[str | None], None]:
    """Return a validator refusing, in words, a key an HTTP header cannot carry, saying to
    copy it again from ``page``: refused at save time rather than failing every request."""

    def check(value: str | None) -> None:
        odd = header_unsafe_character(value)
        if odd is not None:
            raise marshmallow.ValidationError(
                f"{header_unsafe_sentence(odd)} Copy it again from {page}."
            )

    return check
