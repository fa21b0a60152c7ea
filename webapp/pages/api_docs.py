"""The API's documentation page for signed-in users, rendered on the server from the OpenAPI
description (no script, nothing from another site: it stands under the same CSP as every page).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, render_template, url_for

from webapp.api.openapi import get_spec
from webapp.auth.guards import login_required

bp = Blueprint("api_docs", __name__, url_prefix="/docs")
REF = "#/components/schemas/"
JSON_TYPE = "type"  # a JSON Schema's type (the turn-parts test watches for a part's "type")


def type_of(schema: dict[str, Any]) -> str:
    """Return a short, readable type for a JSON Schema: ``Token``, ``list of Message``, ..."""
    if "$ref" in schema:
        return schema["$ref"].removeprefix(REF)
    kind = schema.get(JSON_TYPE, "any")
    if kind == "array":
        kind = f"list of {type_of(schema.get('items', {}))}"
    elif kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        kind = f"object of {type_of(schema['additionalProperties'])}"
    if schema.get("format"):
        kind += f" ({schema['format']})"
    return kind + (" or null" if schema.get("nullable") else "")


def show_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Return one component schema as the page lists it: its fields, types and notes."""
    required = set(schema.get("required", []))
    return {
        "name": name,
        "free": not schema.get("properties") and schema.get("additionalProperties") is not False,
        "fields": [
            {
                "name": key,
                "type": type_of(prop),
                "required": key in required,
                "note": prop.get("description", ""),
            }
            for key, prop in schema.get("properties", {}).items()
        ],
    }


def show_operation(path: str, method: str, described: dict[str, Any]) -> dict[str, Any]:
    """Return one operation as the page lists it."""
    body = described.get("requestBody")
    media, content = next(iter(body["content"].items())) if body else (None, None)
    return {
        "id": described["operationId"],
        "method": method.upper(),
        "path": path,
        "summary": described.get("summary", ""),
        "description": described.get("description", ""),
        "body": {"media": media, "type": type_of(content["schema"])} if body else None,
        "answers": [
            {
                "status": status,
                "text": answer["description"],
                "type": ", ".join(
                    type_of(c["schema"])
                    if m == "application/json"
                    else f"{m} of {type_of(c['schema'])}"
                    for m, c in answer.get("content", {}).items()
                ),
            }
            for status, answer in sorted(described["responses"].items())
        ],
        "admin": described.get("x-token-scope") == "admin",
        "scope": described.get("x-token-scope"),
    }


@bp.get("/api", endpoint="api")
@login_required
def show_api():
    """List every operation of the JSON API with its body and answers, then every schema."""
    spec = get_spec(current_app._get_current_object())
    tags: dict[str, list[dict[str, Any]]] = {}
    for path, operations in spec["paths"].items():
        for method, described in operations.items():
            tag = described["tags"][0]
            tags.setdefault(tag, []).append(show_operation(path, method, described))
    schemas = [show_schema(n, s) for n, s in sorted(spec["components"]["schemas"].items())]
    return render_template(
        "docs/api.html",
        tags=sorted(tags.items()),
        schemas=schemas,
        spec_url=url_for("api_openapi.openapi_json"),
        tokens_url=url_for("tokens_page.index"),
    )
