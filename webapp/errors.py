"""Errors that carry an HTTP status, and the handlers giving every /api/ error one JSON shape.

    ApiError(message, status=400, fields=None, retry_after=None)
                                                raised by views; becomes the JSON below
    werkzeug HTTPException (401, 403, 404, 405, CSRF 400, 500 ...) -> same JSON under /api/
    flask_wtf CSRFError (a 400)                 -> CSRF_REFUSED, which says what to do

The shape: {"error": {"message": "...", "fields": {...}}}; under a prefix an area registers in
``app.extensions["error_shapes"]`` (the OpenAI-compatible ``/v1/``), that area's shape instead.
"""

from __future__ import annotations

import logging

from flask import Flask, Response, current_app, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, InternalServerError

log = logging.getLogger(__name__)

MESSAGES = {
    400: "The request could not be understood.",
    401: "Sign in, or send an API token as 'Authorization: Bearer <token>'.",
    403: "You are not allowed to do this.",
    404: "Nothing was found at this address.",
    405: "This address does not accept that method.",
    500: "Something went wrong on the server. Try again, and tell an administrator if it persists.",
}
# Flask-WTF's own words ("The CSRF token is missing.") name the fault but not the way out.
CSRF_REFUSED = (
    "This request did not carry the page's security token (CSRF), so it was refused. Reload "
    "the page and try again; a program calling the API sends 'Authorization: Bearer <token>' "
    "instead."
)


class ApiError(Exception):
    """An error a view reports to the client, with its HTTP status and per-field messages;
    ``retry_after`` (seconds) is sent as the ``Retry-After`` header (a 429 over a limit)."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        fields: dict | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        self.fields = fields or {}
        self.retry_after = retry_after


def wants_json() -> bool:
    """Return whether the current request is an API request answered in JSON."""
    return request.path.startswith(("/api/", "/v1/")) or request.path == "/healthz"


def json_error(message: str, status: int, fields: dict | None = None) -> tuple[Response, int]:
    """Return the one JSON error response shape (or the shape registered for the path)."""
    for prefix, shape in current_app.extensions.get("error_shapes", {}).items():
        if request.path.startswith(prefix):
            return jsonify(shape(message, status, fields or {})), status
    return jsonify({"error": {"message": message, "fields": fields or {}}}), status


def describe(error: HTTPException) -> str:
    """Return a sentence for an HTTP error, preferring a description set where it was raised."""
    default = type(error).description
    if error.description and error.description != default:
        return error.description
    return MESSAGES.get(error.code or 500, error.name)


def handle_api_error(error: ApiError):
    """Render an ApiError as JSON, with its Retry-After header when it has one."""
    response, status = json_error(error.message, error.status, error.fields)
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response, status


def handle_http_error(error: HTTPException):
    """Render an HTTP error as JSON under /api/, as a page elsewhere."""
    status = error.code or 500
    if isinstance(error, InternalServerError):
        original = getattr(error, "original_exception", None)
        if original is not None:
            log.error("Unhandled error on %s %s", request.method, request.path, exc_info=original)
        message = MESSAGES[500]
    elif isinstance(error, CSRFError):
        message = CSRF_REFUSED
    else:
        message = describe(error)
    if wants_json():
        response, status = json_error(message, status)
        if error.code == 405 and hasattr(error, "valid_methods") and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)
        return response, status
    return render_template("errors/error.html", status=status, message=message), status


def register_error_handlers(app: Flask) -> None:
    """Attach the handlers to the app."""
    app.register_error_handler(ApiError, handle_api_error)
    app.register_error_handler(HTTPException, handle_http_error)
