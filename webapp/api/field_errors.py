"""People's words for marshmallow's stock field messages, naming each field by its form title.

marshmallow says "engine: Missing data for required field."; a person reads "Search engine is
required." Messages a schema wrote itself ("Brave needs an API key.") are sentences already and
pass through unchanged, as do the general (``_schema``) ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from marshmallow import Schema

Rewrite = Callable[[str, re.Match[str]], str]


def _number(text: str) -> str:
    """Return a bound as people write it: 100000 -> 100,000."""
    return f"{int(text):,}" if text.lstrip("-").isdigit() else text


def _length(title: str, low: str, high: str) -> str:
    if low == "0":
        return f"{title} must be at most {_number(high)} characters long."
    if low == "1":
        # marshmallow says the same for an empty value and a long one: name both.
        return f"{title} is required and must be at most {_number(high)} characters long."
    return f"{title} must be {_number(low)} to {_number(high)} characters long."


# marshmallow's stock messages (fields and validators), each with the sentence it becomes.
_STOCK: list[tuple[str, Rewrite]] = [
    (r"Missing data for required field\.", lambda t, m: f"{t} is required."),
    (r"Field may not be null\.", lambda t, m: f"{t} cannot be empty."),
    (r"Unknown field\.", lambda t, m: f"{t} is not a setting Lookout knows: leave it out."),
    (
        r"Not a valid URL\.",
        lambda t, m: f"{t} must be a web address starting with http:// or https://.",
    ),
    (r"Not a valid string\.", lambda t, m: f"{t} must be text."),
    (r"Not a valid integer\.", lambda t, m: f"{t} must be a whole number."),
    (r"Not a valid number\.", lambda t, m: f"{t} must be a number."),
    (r"Not a valid boolean\.", lambda t, m: f"{t} must be on or off (true or false)."),
    (r"Not a valid list\.", lambda t, m: f"{t} must be a list."),
    (r"Length must be between (\d+) and (\d+)\.", lambda t, m: _length(t, m[1], m[2])),
    (
        r"Shorter than minimum length (\d+)\.",
        lambda t, m: f"{t} must be at least {_number(m[1])} characters long.",
    ),
    (
        r"Longer than maximum length (\d+)\.",
        lambda t, m: f"{t} must be at most {_number(m[1])} characters long.",
    ),
    (
        r"Must be greater than or equal to (\S+) and less than or equal to (\S+)\.",
        lambda t, m: f"{t} must be from {_number(m[1])} to {_number(m[2])}.",
    ),
    (r"Must be greater than or equal to (\S+)\.", lambda t, m: f"{t} must be at least {m[1]}."),
    (r"Must be less than or equal to (\S+)\.", lambda t, m: f"{t} must be at most {m[1]}."),
    (r"Must be one of: (.+)\.", lambda t, m: f"{t} must be one of: {m[1]}. Pick one of these."),
]
_COMPILED = [(re.compile(pattern), rewrite) for pattern, rewrite in _STOCK]


def titles_of(schema: type[Schema] | Schema | None) -> dict[str, str]:
    """Return each field's form title (its ``title`` metadata) by its JSON key."""
    if schema is None:
        return {}
    instance = schema() if isinstance(schema, type) else schema
    return {
        field.data_key or name: field.metadata["title"]
        for name, field in instance.fields.items()
        if "title" in field.metadata
    }


def title_for(key: str, titles: Mapping[str, str]) -> str:
    """Return how a person calls the field at ``key`` (a dotted path such as ``models.0.name``)."""
    first, *rest = key.split(".")
    words = [titles.get(first, first)]
    for part in rest:
        words.append(f"row {int(part) + 1}" if part.isdigit() else part)
    return ", ".join(words)


def sentence(key: str, message: str, titles: Mapping[str, str]) -> str:
    """Return ``message`` about the field at ``key`` as a sentence a person reads."""
    for pattern, rewrite in _COMPILED:
        match = pattern.fullmatch(message)
        if match is not None:
            return rewrite(title_for(key, titles), match)
    return message


def plain_fields(fields: Mapping[str, list[str]], titles: Mapping[str, str]) -> dict[str, list]:
    """Return per-field messages with every stock message rewritten as a sentence."""
    return {
        key: [message if key == "_schema" else sentence(key, message, titles) for message in msgs]
        for key, msgs in fields.items()
    }


def summary(fields: Mapping[str, list[str]], fallback: str) -> str:
    """Return one paragraph of the (already plain) messages, general ones first; else fallback."""
    ordered = sorted(fields.items(), key=lambda item: item[0] != "_schema")
    text = " ".join(message for _key, messages in ordered for message in messages)
    return text or fallback


def plain_error(
    fields: Mapping[str, list[str]], titles: Mapping[str, str], fallback: str
) -> tuple[str, dict[str, Any]]:
    """Return (message, fields) in people's words for a 400 about these fields."""
    plain = plain_fields(fields, titles)
    return summary(plain, fallback), plain
