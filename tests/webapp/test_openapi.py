"""The OpenAPI description: complete for every /api/ route, served to signed-in users, shown on
a page, and answers that are what it says."""

from __future__ import annotations

import re

import pytest

from webapp.api.openapi import make_spec, openapi_path

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
BODILESS = {  # writes besides DELETE that read no body: the id in the path says everything
    ("POST", "/api/turns/{turn_id}/cancel"),
    ("POST", "/api/admin/providers/{provider_id}/test"),
    ("POST", "/api/admin/mcp-servers/{server_name}/refresh"),
}
ERROR_REF = "#/components/schemas/Error"
# Statuses of 400 and up that answer with something other than an error, and why.
NOT_ERRORS = {
    ("GET", "/api/admin/health", "503"): "a part is down: the answer is the health report",
}


def api_routes(app):
    """Yield (method, OpenAPI path) for every method of every /api/ rule in the url_map."""
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                yield method, openapi_path(rule.rule)


def test_every_api_route_is_described_with_its_body_answers_and_errors(app):
    spec = make_spec(app)
    routes = sorted(api_routes(app))
    assert len(routes) > 25
    missing = [f"{m} {p}" for m, p in routes if m.lower() not in spec["paths"].get(p, {})]
    assert not missing, "Describe these with @operation(...) beside their view: " + str(missing)
    for method, path in routes:
        described = spec["paths"][path][method.lower()]
        name = f"{method} {path}"
        responses = described["responses"]
        assert any(status.startswith("2") for status in responses), name
        assert described["summary"], f"{name} has no docstring"
        for status, answer in responses.items():
            if status.startswith("2") and status != "204":
                assert answer.get("content"), f"{name} {status} names no answer schema"
            if int(status) >= 400 and (method, path, status) not in NOT_ERRORS:
                assert answer["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}
        assert "401" in responses, f"{name} is open to anonymous callers: say so here if meant"
        if method in WRITES:
            bodiless = method == "DELETE" or (method, path) in BODILESS
            assert ("requestBody" in described) != bodiless, name
        if "requestBody" in described:
            assert {"400", "413"} <= set(responses), name
        if "{" in path:
            assert "404" in responses, name
        if path.startswith("/api/admin/"):
            assert "403" in responses, name


def test_the_one_error_shape_is_a_component(app):
    schemas = make_spec(app)["components"]["schemas"]
    assert schemas["Error"]["required"] == ["error"]
    assert set(schemas["ErrorDetail"]["required"]) == {"message", "fields"}


def test_the_description_is_served_to_signed_in_users_and_bearer_tokens(client, make_user, bearer):
    assert client.get("/api/openapi.json").status_code == 401
    served = client.get("/api/openapi.json", headers=bearer(make_user("alice")))
    assert served.status_code == 200
    spec = served.get_json()
    assert spec["openapi"] == "3.0.3"
    assert "/api/conversations/{conversation_id}/turns" in spec["paths"]


def test_the_documentation_page_lists_every_operation(app, client, signed_in_client):
    assert client.get("/docs/api").status_code == 302  # to sign in
    page = signed_in_client("alice").get("/docs/api")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    for method, path in api_routes(app):
        assert re.search(rf">{method}</span> <code>{re.escape(path)}</code>", text), (method, path)
    assert 'id="schema-TurnRequest"' in text
    assert "<script" not in text.split("<main>")[1]


@pytest.mark.parametrize(
    "answer",
    ["/api/me", "/api/tokens", "/api/conversations", "/api/models", "/api/tools"],
)
def test_answers_carry_exactly_the_fields_their_schema_describes(app, signed_in_client, answer):
    client = signed_in_client("alice")
    client.post("/api/tokens", json={"name": "laptop"})
    client.post("/api/conversations", json={"title": "Notes"})
    spec = make_spec(app)
    schemas = spec["components"]["schemas"]
    ref = spec["paths"][answer]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    shown = client.get(answer).get_json()
    schema = schemas[ref["$ref"].rsplit("/", 1)[1]]
    assert set(shown) == set(schema["properties"])
    for key, prop in schema["properties"].items():
        if prop.get("type") == "array" and "$ref" in prop.get("items", {}) and shown[key]:
            inner = schemas[prop["items"]["$ref"].rsplit("/", 1)[1]]
            assert set(shown[key][0]) == set(inner["properties"]), key


def test_the_description_documents_token_scopes_and_expiry(app):
    spec = make_spec(app)
    schemas = spec["components"]["schemas"]
    body = schemas["TokenBody"]
    assert {"scopes", "expiresInDays"} <= set(body["properties"])
    assert body["properties"]["scopes"]["items"]["enum"] == ["chat", "admin"]
    assert {"scopes", "expiresAt"} <= set(schemas["Token"]["properties"])
    paths = spec["paths"]
    assert paths["/api/conversations"]["get"]["x-token-scope"] == "chat"
    assert paths["/api/admin/users"]["get"]["x-token-scope"] == "admin"
    assert paths["/api/me"]["get"]["x-token-scope"] == "any"
    assert paths["/api/tokens"]["post"]["x-token-scope"] == "none"
    assert paths["/api/admin/users/{user_id}"]["patch"]["x-token-scope"] == "none"
    assert paths["/api/admin/users/{user_id}/password"]["post"]["x-token-scope"] == "none"
    assert "403" in paths["/api/conversations"]["get"]["responses"]
