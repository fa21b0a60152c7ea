"""Reading JSON request bodies: one place that turns a bad body into a 400 that says what to fix."""

from __future__ import annotations

from typing import Any

from flask import request
from marshmallow import Schema, ValidationError

from tools.api import flatten_errors
from webapp.api.field_errors import plain_error, titles_of
from webapp.errors import ApiError


def json_object(hint: str = "Send a JSON object in the request body.") -> dict[str, Any]:
    """Return the request's JSON object, or raise a 400 with ``hint``."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ApiError(hint, 400)
    return body


def load_json(schema: type[Schema], what: str, partial: bool = False) -> dict[str, Any]:
    """Return the body loaded by ``schema``; a 400 with per-field messages names what is wrong."""
    body = json_object(f"Send the {what} as a JSON object.")
    try:
        return schema(partial=partial).load(body)
    except ValidationError as exc:
        fallback = f"The {what} is not valid."
        message, fields = plain_error(flatten_errors(exc.messages), titles_of(schema), fallback)
        raise ApiError(message, 400, fields) from exc
