"""``POST /mcp``: MCP's streamable-HTTP transport, for API tokens with the chat scope.

Requests are JSON-RPC messages, one per POST. Answers are ``application/json``, except
tools/call, answered as an event stream: a comment every second while a worker runs the tool
(so that a client that went away is noticed, and its call cancelled), then the result. No
session id is issued: every request stands on its own token. GET (a stream the server would
push on) answers 405, as the transport allows.

Refusals are JSON-RPC errors, with the HTTP status the transport gives them: 401 without a
valid token, 403 for a token without the chat scope, 415 for a body not sent as JSON, 400 for
one that is not a JSON-RPC 2.0 message (a batch, an id that is not a string or a number).
/mcp is left out of the OpenAPI description (/api/openapi.json): it speaks MCP, not REST,
and is described by MCP itself (tools/list).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, g, request, stream_with_context
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from werkzeug.exceptions import HTTPException

from webapp.auth.scopes import EXPIRED, MISSING_SCOPE, describe_expiry
from webapp.errors import CSRF_REFUSED, MESSAGES
from webapp.mcp import methods
from webapp.mcp.methods import RpcError
from webapp.queue import QueueError

bp = Blueprint("mcp", __name__)

# A server-defined JSON-RPC code for a request its token may not make.
UNAUTHORIZED = -32001
HEARTBEAT_SECONDS = 1.0
GET_REFUSED = "Lookout's MCP server answers POST only: it pushes nothing on a GET stream."
NOT_ONE_MESSAGE = (
    'The body must be one JSON-RPC 2.0 message (an object with "jsonrpc": "2.0", and a '
    '"method", an "id" or both); batches are not accepted.'
)
NOT_JSON = "Send the JSON-RPC message as JSON, with the header 'Content-Type: application/json'."
NO_TOKEN = (
    "Send a Lookout API token as 'Authorization: Bearer <token>'. Create one with the chat "
    "scope under Settings → API tokens, and put it in your MCP client's configuration."
)


def error_text(code: int, message: str, id: Any = None) -> str:
    """Return a JSON-RPC error as text."""
    return json.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def rpc_error(code: int, message: str, id: Any = None, status: int = 200) -> Response:
    """Return a JSON-RPC error answer with its HTTP status."""
    return Response(error_text(code, message, id), status=status, mimetype="application/json")


def rpc_result(id: Any, result: dict[str, Any]) -> str:
    """Return a JSON-RPC result as text."""
    return json.dumps({"jsonrpc": "2.0", "id": id, "result": result})


def refusal() -> Response | None:
    """Return the answer refusing this request's credentials, or None when its token may."""
    signed_in = current_user.is_authenticated  # loads the token's user, or notes its expiry
    expired = g.get("expired_api_token")
    if expired is not None:
        message = EXPIRED.format(when=describe_expiry(expired.expires_at))
        return unauthorized(message)
    token = g.get("api_token")
    if not signed_in or token is None:
        return unauthorized(NO_TOKEN)
    if "chat" not in (token.scopes or []):
        return rpc_error(UNAUTHORIZED, MISSING_SCOPE.format(scope="chat"), status=403)
    return None


def unauthorized(message: str) -> Response:
    """Return a 401 that names the bearer scheme, as HTTP asks."""
    response = rpc_error(UNAUTHORIZED, message, status=401)
    response.headers["WWW-Authenticate"] = 'Bearer realm="Lookout"'
    return response


def is_id(value: Any) -> bool:
    """Return whether ``value`` may be a request's id: a string or a number (MCP's ids are
    never null, JSON's true and false are not numbers, and NaN, which Python's parser reads,
    could not be sent back as JSON)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int) and not isinstance(value, bool)


def message_fault(message: Any) -> str | None:
    """Return what makes ``message`` other than one JSON-RPC 2.0 request, notification or
    answer of the client's, as a sentence; None for one of those."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return NOT_ONE_MESSAGE
    if "id" in message and not is_id(message["id"]):
        return "A request's id must be a string or a number, as MCP asks: send one of those."
    if "method" not in message:
        if "id" in message and ("result" in message) != ("error" in message):
            return None  # the client's answer to a request of ours
        return NOT_ONE_MESSAGE
    if not isinstance(message["method"], str):
        return 'method must be a string naming the method, such as "tools/list".'
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return 'params must be an object, such as {"name": "web_search"}, or left out.'
    return None


def read_message() -> Any:
    """Return the body's JSON, None when it does not parse."""
    try:
        return request.get_json(silent=True)
    except RecursionError:  # nesting deeper than Python's stack, which failed the request
        return None


@bp.post("/mcp")
def mcp_endpoint():
    """Answer one JSON-RPC message from an MCP client, as the token's user."""
    refused = refusal()
    if refused is not None:
        return refused
    if not request.is_json:
        return rpc_error(INVALID_REQUEST, NOT_JSON, status=415)
    message = read_message()
    if message is None:
        return rpc_error(PARSE_ERROR, "The body must be one JSON-RPC message, as JSON.", status=400)
    fault = message_fault(message)
    if fault is not None:
        id = message.get("id") if isinstance(message, dict) else None
        return rpc_error(INVALID_REQUEST, fault, id if is_id(id) else None, status=400)
    if "method" not in message or "id" not in message:
        return Response(status=202)  # a notification, or a client's answer: nothing to say
    id, method, params = message["id"], message["method"], message.get("params") or {}
    try:
        if method == "tools/call":
            return stream_call(id, methods.call_tool(current_user, params))
        result = methods.answer(current_user, method, params, current_app.config["APP_NAME"])
    except RpcError as error:
        return rpc_error(error.code, error.message, id)
    except QueueError as error:
        return rpc_error(INTERNAL_ERROR, str(error), id, status=503)
    return Response(rpc_result(id, result), mimetype="application/json")


def stream_call(id: Any, running: Iterator[dict[str, Any] | None]) -> Response:
    """Answer a tools/call as an event stream: a comment while it runs, then its result.

    Closing the stream (the client went away) closes ``running``, which cancels the call.
    """
    first = next(running)  # refusals raise here, before the stream starts

    def events() -> Iterator[str]:
        said = time.monotonic()
        result = first
        try:
            while result is None:
                if time.monotonic() - said >= HEARTBEAT_SECONDS:
                    said = time.monotonic()
                    yield ": running\n\n"
                result = next(running)
            yield f"event: message\ndata: {rpc_result(id, result)}\n\n"
        except QueueError as error:
            yield f"event: message\ndata: {error_text(INTERNAL_ERROR, str(error), id)}\n\n"
        finally:
            running.close()

    return Response(
        stream_with_context(events()),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@bp.get("/mcp")
def no_stream():
    """Answer 405: the server pushes nothing, so it opens no stream on GET."""
    response = rpc_error(INVALID_REQUEST, GET_REFUSED, status=405)
    response.headers["Allow"] = "POST"
    return response


@bp.errorhandler(CSRFError)
def refuse_without_token(_error: CSRFError) -> Response:
    """Answer a request without a token: 401 for a program, the CSRF refusal (400) for a
    browser's session, which the page's security token would have let through elsewhere."""
    if current_user.is_authenticated:
        return rpc_error(INVALID_REQUEST, CSRF_REFUSED, status=400)
    return unauthorized(NO_TOKEN)


@bp.errorhandler(HTTPException)
def http_error(error: HTTPException) -> Response:
    """Answer an HTTP error (413 for a body too large) as a JSON-RPC error."""
    message = MESSAGES.get(error.code or 500, error.description or error.name)
    return rpc_error(INVALID_REQUEST, message, status=error.code or 500)
