"""Errors of the OpenAI-compatible API, in OpenAI's shape: what an OpenAI client raises from.

    OpenAIError(message, status, param=None, code=None)   raised by the ``/v1/`` views
    any other error under /v1/ (a token refused, a body that does not parse, a 404 route)
        -> ``openai_shape`` of its message, status and per-field messages
    a POST with no token (so no CSRF token either)   -> 401, as a bad token is

The shape: ``{"error": {"message": ..., "type": ..., "param": ..., "code": ...}}``, where
``type`` follows from the status (``KINDS``) and ``param`` names the first field at fault.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify
from flask_login import current_user
from flask_wtf.csrf import CSRFError

from webapp.errors import MESSAGES, ApiError, handle_http_error
from webapp.openai_api.routes import bp

# OpenAI's error types, by HTTP status; any other 4xx is an invalid request, any 5xx the server's.
KINDS = {
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    429: "rate_limit_error",
}
CODES = {
    401: "invalid_api_key",
    403: "insufficient_scope",
    404: "not_found",
    413: "request_too_large",
    429: "rate_limit_exceeded",
}


def kind_of(status: int) -> str:
    """Return OpenAI's error type for an HTTP status."""
    return KINDS.get(status, "server_error" if status >= 500 else "invalid_request_error")


def error_body(
    message: str, status: int, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """Return an error in OpenAI's shape."""
    return {
        "error": {
            "message": message,
            "type": kind_of(status),
            "param": param,
            "code": code or CODES.get(status),
        }
    }


def param_of(fields: dict[str, Any]) -> str | None:
    """Return the request field the first per-field message is about (a nested object's own
    message, keyed ``messages.0._schema``, is about ``messages.0``), None for the whole body."""
    key = next(iter(fields), None)
    if key is None or key == "_schema":
        return None
    return key.removesuffix("._schema")


def openai_shape(message: str, status: int, fields: dict[str, Any]) -> dict[str, Any]:
    """Return Lookout's error (message, status, per-field messages) in OpenAI's shape."""
    return error_body(message, status, param_of(fields))


class OpenAIError(ApiError):
    """An error of a ``/v1/`` view: ``param`` the request field at fault, ``code`` a short
    word a program can test (``model_not_found``, ``tools_not_supported``); ``retry`` False
    tells OpenAI's clients not to send it again on their own (``x-should-retry``)."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
        retry_after: int | None = None,
        retry: bool | None = None,
    ):
        super().__init__(message, status, retry_after=retry_after)
        self.param = param
        self.code = code
        self.retry = retry


def handle_openai_error(error: OpenAIError) -> tuple[Response, int]:
    """Render an OpenAIError, with its Retry-After header when it has one."""
    response = jsonify(error_body(error.message, error.status, error.param, error.code))
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    if error.retry is not None:
        response.headers["x-should-retry"] = "true" if error.retry else "false"
    return response, error.status


@bp.errorhandler(CSRFError)
def refuse_without_token(error: CSRFError) -> tuple[Response, int]:
    """Answer a POST without a token as OpenAI's clients expect, 401; a browser's session
    without the page's security token keeps the CSRF refusal (a 400)."""
    if current_user.is_authenticated:
        return handle_http_error(error)
    return jsonify(error_body(MESSAGES[401], 401)), 401
