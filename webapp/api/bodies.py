"""Reading JSON request bodies: one place that turns a bad body into a 400 that says what to fix.

Every ``/api/`` (and ``/v1/``) request's body is checked before any view (or the CSRF check)
reads it: one over ``JSON_MAX_BYTES`` is a 413 without being read, and JSON that does not parse
is a 400. Uploads (multipart) keep their own, larger limit (``ATTACHMENT_MAX_BYTES``, checked in
the upload view).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from flask import Flask, current_app, request
from flask.json.provider import DefaultJSONProvider
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge

from tools.api import flatten_errors
from tools.charset import loads_json
from webapp.api.field_errors import plain_error, titles_of
from webapp.errors import ApiError

MULTIPART = "multipart/form-data"


def too_large(limit: int) -> ApiError:
    """Return the 413 for a JSON body over ``limit`` bytes."""
    size = f"{limit / 1024 / 1024:g} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
    return ApiError(
        f"The request body is larger than the {size} the API reads. Send less at once: "
        "attach long text as a file with POST /api/uploads instead.",
        413,
    )


def check_body() -> None:
    """Refuse an ``/api/`` body that is too large (413) or JSON that does not parse (400)."""
    if not request.path.startswith(("/api/", "/v1/")) or request.mimetype == MULTIPART:
        return
    limit = current_app.config["JSON_MAX_BYTES"]
    if (request.content_length or 0) > limit:
        raise too_large(limit)
    request.max_content_length = limit  # a body sent without a length stops there too
    if not request.is_json:
        return  # a view expecting JSON says so; a form's fields must stay readable
    try:
        if request.get_data(cache=True).strip():
            request.get_json()
    except RequestEntityTooLarge:
        raise too_large(limit) from None
    except (BadRequest, RecursionError):  # nesting deeper than Python's stack does not parse
        raise ApiError(
            'The request body is not valid JSON. Send a JSON object, such as {"title": "Notes"}.',
            400,
        ) from None


class BodyJSON(DefaultJSONProvider):
    """Flask's JSON, reading a lone surrogate (``"\\ud800"``, half an emoji a client cut) as
    U+FFFD, as a browser's encoder sends it: stored as it came, it failed the request."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return loads_json(s) if not kwargs else super().loads(s, **kwargs)


def init_bodies(app: Flask) -> None:
    """Check bodies first, before the CSRF check reads a form out of one; read their JSON with
    ``BodyJSON``."""
    app.json = BodyJSON(app)
    app.before_request_funcs.setdefault(None, []).insert(0, check_body)


def json_object(hint: str = "Send a JSON object in the request body.") -> dict[str, Any]:
    """Return the request's JSON object, or raise a 400 with ``hint``."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ApiError(hint, 400)
    return body


@cache
def _loader(schema: type[Schema], partial: bool) -> Schema:
    """One instance of ``schema`` per process: a load keeps nothing on it, and making one per
    request (its fields deep-copied) cost six times the load of a turn's body."""
    return schema(partial=partial)


def load_object(
    schema: type[Schema], body: dict[str, Any], what: str, partial: bool = False
) -> dict[str, Any]:
    """Return ``body`` loaded by ``schema``; a 400 with per-field messages names what is wrong."""
    try:
        return _loader(schema, partial).load(body)
    except ValidationError as exc:
        fallback = f"The {what} is not valid."
        message, fields = plain_error(flatten_errors(exc.messages), titles_of(schema), fallback)
        raise ApiError(message, 400, fields) from exc


def load_json(schema: type[Schema], what: str, partial: bool = False) -> dict[str, Any]:
    """Return the body loaded by ``schema``; a 400 with per-field messages names what is wrong."""
    return load_object(schema, json_object(f"Send the {what} as a JSON object."), what, partial)
