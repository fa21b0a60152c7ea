"""Model providers over the API: admins manage them with write-only keys; users list models."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import Provider

PROVIDER = {
    "name": "acme",
    "kind": "openai-compatible",
    "baseUrl": "http://127.0.0.1:9/v1",
    "apiKey": "sk-acme-secret",
    "models": [{"name": "org/big", "tools": True}, {"name": "small", "tools": False}],
}


@pytest.fixture
def admin(signed_in_client):
    """A client signed in as an admin."""
    return signed_in_client("root", admin=True)


def stored_key(app, provider_id: str) -> str | None:
    """Return the key the database holds for a provider."""
    with app.app_context():
        return db.session.get(Provider, provider_id).api_key


def test_a_created_provider_comes_back_without_its_key(app, admin):
    response = admin.post("/api/admin/providers", json=PROVIDER)
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["name"] == "acme"
    assert body["baseUrl"] == "http://127.0.0.1:9/v1"
    assert body["keySet"] is True
    assert body["models"] == PROVIDER["models"]
    assert "apiKey" not in body
    assert stored_key(app, body["id"]) == "sk-acme-secret"
    for path in ("/api/admin/providers", f"/api/admin/providers/{body['id']}"):
        read = admin.get(path)
        assert read.status_code == 200
        assert "sk-acme-secret" not in read.get_data(as_text=True)
    assert admin.get("/api/admin/providers").get_json()["providers"] == [body]
    assert admin.get(f"/api/admin/providers/{body['id']}").get_json() == body


def test_patching_a_provider_changes_only_what_is_given_and_a_blank_key_keeps_it(app, admin):
    created = admin.post("/api/admin/providers", json=PROVIDER).get_json()
    path = f"/api/admin/providers/{created['id']}"
    response = admin.patch(path, json={"name": "acme2", "apiKey": ""})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["name"] == "acme2"
    assert response.get_json()["models"] == PROVIDER["models"]
    assert stored_key(app, created["id"]) == "sk-acme-secret"
    admin.patch(path, json={"apiKey": "sk-new"})
    assert stored_key(app, created["id"]) == "sk-new"


def test_a_deleted_provider_is_gone(admin):
    created = admin.post("/api/admin/providers", json=PROVIDER).get_json()
    path = f"/api/admin/providers/{created['id']}"
    assert admin.delete(path).status_code == 204
    assert admin.get(path).status_code == 404
    assert admin.get("/api/admin/providers").get_json()["providers"] == []


def test_a_provider_name_with_a_slash_is_refused(admin):
    response = admin.post("/api/admin/providers", json={**PROVIDER, "name": "a/b"})
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"]["name"] == [
        'A provider name may not contain "/".'
    ]
    assert admin.get("/api/admin/providers").get_json()["providers"] == []


def test_a_provider_needs_a_unique_name_and_a_base_url(admin):
    assert admin.post("/api/admin/providers", json=PROVIDER).status_code == 201
    taken = admin.post("/api/admin/providers", json=PROVIDER)
    assert taken.status_code == 400
    assert taken.get_json()["error"]["fields"] == {"name": ["Already taken."]}
    missing = admin.post("/api/admin/providers", json={"name": "other"})
    assert missing.status_code == 400
    assert "baseUrl" in missing.get_json()["error"]["fields"]


def test_renaming_a_provider_to_a_taken_name_is_refused_and_changes_nothing(admin):
    """Fuzzing found this a 500: the check's query wrote the rename first (autoflush), and the
    database's unique name refused it."""
    first = admin.post("/api/admin/providers", json=PROVIDER).get_json()
    second = admin.post("/api/admin/providers", json={**PROVIDER, "name": "other"}).get_json()
    url = f"/api/admin/providers/{second['id']}"
    response = admin.patch(url, json={"name": first["name"], "baseUrl": "http://127.0.0.1:8/v1"})
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"] == {"name": ["Already taken."]}
    kept = admin.get(url).get_json()
    assert (kept["name"], kept["baseUrl"]) == ("other", PROVIDER["baseUrl"])


def test_models_are_listed_by_provider_and_model_name(admin, signed_in_client):
    admin.post("/api/admin/providers", json=PROVIDER)
    response = signed_in_client("alice").get("/api/models")
    assert response.status_code == 200
    assert response.get_json()["models"] == [
        {
            "id": "acme/org/big",
            "provider": "acme",
            "name": "org/big",
            "tools": True,
            "default": False,
        },
        {"id": "acme/small", "provider": "acme", "name": "small", "tools": False, "default": False},
    ]


def test_provider_routes_refuse_other_users(admin, signed_in_client, client):
    created = admin.post("/api/admin/providers", json=PROVIDER).get_json()
    user = signed_in_client("alice")
    path = f"/api/admin/providers/{created['id']}"
    assert user.get("/api/admin/providers").status_code == 403
    assert user.post("/api/admin/providers", json=PROVIDER).status_code == 403
    assert user.get(path).status_code == 403
    assert user.patch(path, json={"name": "mine"}).status_code == 403
    assert user.delete(path).status_code == 403
    assert client.get("/api/models").status_code == 401


def test_a_null_key_removes_the_stored_key_and_a_blank_one_keeps_it(signed_in_client):
    admin = signed_in_client(admin=True)
    body = {"name": "local", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "sk-1", "models": []}
    created = admin.post("/api/admin/providers", json=body).get_json()
    kept = admin.patch(f"/api/admin/providers/{created['id']}", json={"apiKey": ""})
    assert kept.get_json()["keySet"] is True
    removed = admin.patch(f"/api/admin/providers/{created['id']}", json={"apiKey": None})
    assert removed.get_json()["keySet"] is False


def test_a_models_max_tokens_and_context_are_kept_and_checked_against_each_other(admin):
    """Issue 30: each model gets a documented max_tokens and context size an admin can set."""
    body = {**PROVIDER, "models": [{"name": "m", "maxTokens": 1024, "contextTokens": 8192}]}
    created = admin.post("/api/admin/providers", json=body)
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["models"] == [
        {"name": "m", "tools": True, "maxTokens": 1024, "contextTokens": 8192}
    ]
    too_long = {"models": [{"name": "m", "maxTokens": 8192, "contextTokens": 4096}]}
    refused = admin.patch(f"/api/admin/providers/{created.get_json()['id']}", json=too_long)
    assert refused.status_code == 400
    assert "Max tokens (8192) must be smaller than the context (4096)" in str(refused.get_json())


def test_the_default_model_an_admin_chooses_is_the_one_default_across_providers(
    admin, signed_in_client
):
    """Issue 25: the chat's first model with tools won; now an admin chooses the default, and
    choosing one in another provider moves it there."""
    first = {**PROVIDER, "models": [{"name": "org/big"}, {"name": "small", "default": True}]}
    admin.post("/api/admin/providers", json=first)
    second = {**PROVIDER, "name": "zeta", "models": [{"name": "z1"}]}
    created = admin.post("/api/admin/providers", json=second).get_json()

    alice = signed_in_client("alice")

    def defaults() -> list[str]:
        models = alice.get("/api/models").get_json()["models"]
        return [m["id"] for m in models if m["default"]]

    assert defaults() == ["acme/small"]
    moved = admin.patch(
        f"/api/admin/providers/{created['id']}", json={"models": [{"name": "z1", "default": True}]}
    )
    assert moved.status_code == 200, moved.get_json()
    assert defaults() == ["zeta/z1"]

    two = {"models": [{"name": "z1", "default": True}, {"name": "z2", "default": True}]}
    refused = admin.patch(f"/api/admin/providers/{created['id']}", json=two)
    assert refused.status_code == 400
    assert refused.get_json()["error"]["fields"]["models"] == [
        "Only one model can be the default, not z1, z2. Untick Default for all but one."
    ]
    assert defaults() == ["zeta/z1"]
