"""Admin-only pages and APIs, and the one JSON error shape under /api/."""

import pytest


def test_the_admin_page_opens_for_an_admin(signed_in_client):
    response = signed_in_client("root", admin=True).get("/admin/")
    assert response.status_code == 200
    assert "Administration" in response.get_data(as_text=True)


def test_the_admin_page_is_refused_to_a_user_with_a_403_page(signed_in_client):
    response = signed_in_client("alice").get("/admin/")
    assert response.status_code == 403
    assert "Only administrators" in response.get_data(as_text=True)
    assert response.mimetype == "text/html"


def test_the_admin_api_is_refused_to_a_user_with_403_json(client, make_user, bearer):
    response = client.get("/api/admin/users", headers=bearer(make_user("alice")))
    assert response.status_code == 403
    assert response.get_json() == {
        "error": {"message": "Only administrators may do this.", "fields": {}}
    }


def test_the_admin_api_lists_users_for_an_admin(client, make_user, bearer):
    make_user("alice")
    response = client.get("/api/admin/users", headers=bearer(make_user("root", admin=True)))
    assert response.status_code == 200
    users = {user["name"]: user for user in response.get_json()["users"]}
    assert users["root"]["roles"] == ["user", "admin"]
    assert users["alice"]["roles"] == ["user"]
    assert "createdAt" in users["alice"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/api/me", 401),
        ("get", "/api/nowhere", 404),
        ("put", "/api/tokens", 405),
        ("post", "/api/tokens", 400),
    ],
)
def test_api_errors_all_have_one_shape(client, method, path, status):
    response = getattr(client, method)(path, json={})
    assert response.status_code == status
    body = response.get_json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "fields"}
    assert body["error"]["message"].endswith(".")


def test_an_unexpected_api_failure_is_a_500_in_the_same_shape(make_app):
    app = make_app(PROPAGATE_EXCEPTIONS=False)

    @app.get("/api/explode")
    def explode():
        raise RuntimeError("boom")

    response = app.test_client().get("/api/explode")
    assert response.status_code == 500
    assert response.get_json()["error"]["message"].startswith("Something went wrong")
    assert "boom" not in response.get_data(as_text=True)
