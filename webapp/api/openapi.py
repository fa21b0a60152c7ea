"""The OpenAPI 3.0.3 description of the JSON API, generated from the routes and their schemas.

Each ``/api/`` rule of the app's url_map, and each ``/v1/`` one (the OpenAI-compatible API,
webapp/openai_api), contributes its methods; a view's ``Operation`` (webapp/api/operations.py)
gives its body and answers as the same marshmallow schemas the view loads and dumps through,
and its guard gives who may call it: ``x-token-scope`` names the API
token scope it needs ("any" for any, "none" when no token may call it). Served at
``/api/openapi.json`` and, for people, on the page ``/docs/api``.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Blueprint, Flask, current_app, jsonify

from webapp.api.operations import JSON, NO_BODY, Operation, find_operation, operation
from webapp.api.schemas.errors import ErrorSchema
from webapp.api.schemas.free import FreeForm
from webapp.auth.guards import api_login_required, audience_of
from webapp.auth.scopes import any_scope, describe_scopes, needed_scope

bp = Blueprint("api_openapi", __name__, url_prefix="/api")
METHODS = ("get", "post", "put", "patch", "delete")
WRITES = {"post", "put", "patch", "delete"}
DESCRIBED = ("/api/", "/v1/")
ARGUMENT = re.compile(r"<(?:[^<>:]+:)?([^<>]+)>")
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "An API token from Settings, API tokens: no CSRF token needed. Its "
        f"scopes say what it may do. {describe_scopes()} An operation's x-token-scope names "
        "the one it needs. A token may expire: it is then answered 401 saying so. No token may "
        "make tokens, set a password, disable or enable an account, grant or take the admin "
        "role, or create an administrator: those need a signed-in browser (x-token-scope "
        '"none", or said in the operation\'s description), and a token is answered 403.',
    },
    "session": {"type": "apiKey", "in": "cookie", "name": "session"},
    "csrf": {
        "type": "apiKey",
        "in": "header",
        "name": "X-CSRFToken",
        "description": "Sent with the session cookie on every request that changes something.",
    },
}
READ_SECURITY = [{"bearer": []}, {"session": []}]
WRITE_SECURITY = [{"bearer": []}, {"session": [], "csrf": []}]


def openapi_path(rule: str) -> str:
    """Return a Flask rule as an OpenAPI path: ``<id>`` becomes ``{id}``."""
    return ARGUMENT.sub(r"{\1}", rule)


def token_scope(view: Any) -> str | None:
    """Return the token scope a view needs: a scope, "any", "none" (no token), or None (open)."""
    if getattr(view, "browser_only", False):
        return "none"
    return needed_scope(view)


def error_statuses(op: Operation, method: str, view: Any, has_arguments: bool):
    """Return every error status an operation may answer, in order."""
    statuses = set(op.errors)
    audience = audience_of(view)
    if audience is not None:
        statuses.add(401)
    if audience == "admin" or token_scope(view) not in (None, "any"):
        statuses.add(403)  # not an admin, or a token without the scope
    if has_arguments:
        statuses.add(404)
    if method in WRITES:
        statuses.add(400)  # a missing CSRF token, or a body that is not what it should be
    if op.body != NO_BODY:
        statuses.update((400, 413))
    return sorted(statuses)


def answer(status: int, schema: Any) -> dict[str, Any]:
    """Return one OpenAPI response object."""
    described: dict[str, Any] = {"description": HTTPStatus(status).phrase}
    if isinstance(schema, tuple):
        media_type, each = schema
        described["content"] = {media_type: {"schema": each or {"type": "string"}}}
    elif isinstance(schema, dict):
        described["content"] = {
            media_type: {"schema": each or {"type": "string"}}
            for media_type, each in schema.items()
        }
    elif schema is not None:
        described["content"] = {JSON: {"schema": schema}}
    return described


def describe_operation(view: Any, op: Operation, method: str, rule: Any) -> dict[str, Any]:
    """Return the OpenAPI operation object for one method of one rule."""
    audience = audience_of(view)
    doc = (view.__doc__ or "").strip()
    described: dict[str, Any] = {
        "operationId": f"{method}_{rule.endpoint.replace('.', '_')}",
        "summary": doc.split("\n")[0],
        "tags": [rule.endpoint.split(".")[0].removeprefix("api_")],
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in sorted(rule.arguments)
        ]
        + list(op.parameters),
        "responses": {str(s): answer(s, schema) for s, schema in op.answers.items()},
    }
    if doc:
        described["description"] = doc
    for status in error_statuses(op, method, view, bool(rule.arguments)):
        described["responses"][str(status)] = answer(status, op.error_schema or ErrorSchema)
    if op.body != NO_BODY:
        described["requestBody"] = {
            "required": op.body_required,
            "content": {op.body_type: {"schema": op.body}},
        }
    if audience is not None:
        described["security"] = WRITE_SECURITY if method in WRITES else READ_SECURITY
        described["x-token-scope"] = token_scope(view)  # "none": a browser's session only
    return described


def make_spec(app: Flask) -> dict[str, Any]:
    """Return the OpenAPI description of every ``/api/`` and ``/v1/`` route of ``app``."""
    spec = APISpec(
        title=f"{app.config['APP_NAME']} API",
        version="1",
        openapi_version="3.0.3",
        plugins=[MarshmallowPlugin()],
        info={
            "description": "Lookout's JSON API. Keys are camelCase; every error is "
            '{"error": {"message": ..., "fields": {...}}}, a sentence saying what to do.'
        },
    )
    spec.components.schema("Error", schema=ErrorSchema)
    for name, scheme in SECURITY_SCHEMES.items():
        spec.components.security_scheme(name, scheme)
    paths: dict[str, dict[str, Any]] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith(DESCRIBED):
            continue
        view = app.view_functions[rule.endpoint]
        op = find_operation(view)
        if op is None:
            continue  # the completeness test names it
        for method in METHODS:
            if method.upper() in rule.methods:
                operations = paths.setdefault(openapi_path(rule.rule), {})
                operations[method] = describe_operation(view, op, method, rule)
    for path, operations in paths.items():
        spec.path(path=path, operations=operations)
    return spec.to_dict()


def get_spec(app: Flask) -> dict[str, Any]:
    """Return the app's description, made once (the routes do not change while it runs)."""
    if "openapi" not in app.extensions:
        app.extensions["openapi"] = make_spec(app)
    return app.extensions["openapi"]


@bp.get("/openapi.json")
@api_login_required
@any_scope
@operation(answers={200: FreeForm})
def openapi_json():
    """Return this OpenAPI description of the JSON API."""
    return jsonify(get_spec(current_app._get_current_object()))
