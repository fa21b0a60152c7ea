"""The admins' accounts API, /api/admin/users: what an admin may do, and the last admin kept."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import ApiToken, User
from tests.support.accounts import sign_in


@pytest.fixture
def admin(signed_in_client):
    """A client signed in as the admin "root"."""
    return signed_in_client("root", admin=True)


def listed(admin) -> dict[str, dict]:
    """Return the accounts the API lists, by name."""
    response = admin.get("/api/admin/users")
    assert response.status_code == 200
    return {user["name"]: user for user in response.get_json()["users"]}


def test_the_list_shows_names_roles_state_and_last_sign_in(admin, make_user):
    make_user("bob", disabled=True)
    users = listed(admin)
    assert users["root"]["roles"] == ["user", "admin"]
    assert users["root"]["disabled"] is False
    assert users["root"]["lastSignedInAt"] is not None  # the admin signed in to ask
    assert users["bob"]["disabled"] is True
    assert users["bob"]["lastSignedInAt"] is None
    assert not any("password" in key.lower() for user in users.values() for key in user)


def test_a_new_account_gets_a_generated_password_shown_once(app, admin):
    response = admin.post("/api/admin/users", json={"name": "carol"})
    assert response.status_code == 201
    body = response.get_json()
    assert body["name"] == "carol"
    assert body["roles"] == ["user"]
    assert len(body["password"]) >= 16
    assert sign_in(app.test_client(), "carol", body["password"]).status_code == 302
    assert "password" not in listed(admin)["carol"]


def test_a_new_admin_with_a_chosen_password(app, admin):
    response = admin.post(
        "/api/admin/users", json={"name": "dan", "admin": True, "password": "long enough"}
    )
    assert response.status_code == 201
    assert response.get_json()["password"] is None
    assert response.get_json()["roles"] == ["user", "admin"]
    assert sign_in(app.test_client(), "dan", "long enough").status_code == 302


@pytest.mark.parametrize(
    ("body", "status", "field", "sentence"),
    [
        ({"name": "root"}, 409, "name", "An account named 'root' already exists."),
        ({"name": ""}, 400, "name", "A name is required."),
        ({"name": "x" * 101}, 400, "name", "Name must be at most 100 characters long."),
        ({"name": "   "}, 400, "name", "A name is required."),
        ({}, 400, "name", "Name is required."),
        ({"name": "eve", "password": "short"}, 400, "password", "Use at least 8 characters"),
    ],
)
def test_a_refused_new_account_says_why_beside_the_field(admin, body, status, field, sentence):
    response = admin.post("/api/admin/users", json=body)
    assert response.status_code == status
    error = response.get_json()["error"]
    assert sentence in " ".join(error["fields"][field])
    assert "eve" not in listed(admin)


def test_disabling_ends_the_sessions_and_enabling_lets_the_person_back_in(
    app, admin, signed_in_client, make_user
):
    bob = make_user("bob")
    session = signed_in_client(bob)
    response = admin.patch(f"/api/admin/users/{bob.id}", json={"disabled": True})
    assert response.status_code == 200
    assert response.get_json()["disabled"] is True
    assert session.get("/api/me").status_code == 401
    assert sign_in(app.test_client(), "bob", "password").status_code == 403
    assert admin.patch(f"/api/admin/users/{bob.id}", json={"disabled": False}).status_code == 200
    assert session.get("/api/me").status_code == 401  # the old cookie stays ended
    assert sign_in(app.test_client(), "bob", "password").status_code == 302


def test_granting_and_taking_the_admin_role(admin, signed_in_client, make_user):
    bob = make_user("bob")
    session = signed_in_client(bob)
    assert session.get("/api/admin/users").status_code == 403
    granted = admin.patch(f"/api/admin/users/{bob.id}", json={"admin": True})
    assert granted.get_json()["roles"] == ["user", "admin"]
    assert session.get("/api/admin/users").status_code == 200
    taken = admin.patch(f"/api/admin/users/{bob.id}", json={"admin": False})
    assert taken.get_json()["roles"] == ["user"]
    assert session.get("/api/admin/users").status_code == 403


def test_the_last_admin_can_be_neither_demoted_nor_disabled(app, admin):
    root = admin.user
    demoted = admin.patch(f"/api/admin/users/{root.id}", json={"admin": False})
    assert demoted.status_code == 409
    assert demoted.get_json()["error"]["message"] == (
        "root is the only administrator, so it keeps the admin role. Make another account an "
        "administrator (or enable a disabled one) first."
    )
    disabled = admin.patch(f"/api/admin/users/{root.id}", json={"disabled": True})
    assert disabled.status_code == 409
    assert (
        "root is the only administrator, so it cannot be disabled."
        in (disabled.get_json()["error"]["message"])
    )
    assert listed(admin)["root"]["roles"] == ["user", "admin"]
    assert listed(admin)["root"]["disabled"] is False


def test_a_disabled_admin_does_not_count_as_the_remaining_one(admin, make_user):
    make_user("sleepy", admin=True, disabled=True)
    response = admin.patch(f"/api/admin/users/{admin.user.id}", json={"admin": False})
    assert response.status_code == 409


def test_with_a_second_admin_the_first_may_step_down(admin, make_user):
    make_user("deputy", admin=True)
    response = admin.patch(f"/api/admin/users/{admin.user.id}", json={"admin": False})
    assert response.status_code == 200
    assert admin.get("/api/admin/users").status_code == 403


def test_the_command_line_keeps_the_last_admin_too(app, make_user):
    make_user("root", admin=True)
    result = app.test_cli_runner().invoke(args=["users", "disable", "root"])
    assert result.exit_code != 0
    assert "root is the only administrator, so it cannot be disabled." in result.output


def test_setting_a_password_generates_one_and_ends_the_sessions(
    app, admin, signed_in_client, make_user
):
    bob = make_user("bob")
    session = signed_in_client(bob)
    response = admin.post(f"/api/admin/users/{bob.id}/password", json={})
    assert response.status_code == 200
    password = response.get_json()["password"]
    assert session.get("/api/me").status_code == 401
    assert sign_in(app.test_client(), "bob", "password").status_code == 401
    assert sign_in(app.test_client(), "bob", password).status_code == 302


def test_setting_a_chosen_password_checks_it(app, admin, make_user):
    bob = make_user("bob")
    weak = admin.post(f"/api/admin/users/{bob.id}/password", json={"password": "bob"})
    assert weak.status_code == 400
    assert weak.get_json()["error"]["fields"]["password"] == [
        "Use at least 8 characters for the password."
    ]
    chosen = admin.post(f"/api/admin/users/{bob.id}/password", json={"password": "long enough"})
    assert chosen.get_json()["password"] is None
    assert sign_in(app.test_client(), "bob", "long enough").status_code == 302


def test_an_unknown_account_is_a_404_with_a_sentence(admin):
    response = admin.patch("/api/admin/users/nobody", json={"disabled": True})
    assert response.status_code == 404
    assert "There is no such account." in response.get_json()["error"]["message"]


def test_a_change_that_is_not_a_boolean_is_refused(admin, make_user):
    bob = make_user("bob")
    response = admin.patch(f"/api/admin/users/{bob.id}", json={"disabled": "soon"})
    assert response.status_code == 400
    assert "disabled" in response.get_json()["error"]["fields"]


def test_users_and_tokens_may_not_manage_accounts(app, signed_in_client, make_user, bearer):
    bob = make_user("bob")
    user = signed_in_client("alice")
    assert user.post("/api/admin/users", json={"name": "x"}).status_code == 403
    assert user.patch(f"/api/admin/users/{bob.id}", json={"disabled": True}).status_code == 403
    assert user.post(f"/api/admin/users/{bob.id}/password", json={}).status_code == 403
    anonymous = app.test_client()
    assert anonymous.get("/api/admin/users").status_code == 401
    with app.app_context():
        assert db.session.get(User, bob.id).disabled is False


def admin_token(app, user: User) -> dict[str, str]:
    """Return the Authorization header of a new token of the user holding the admin scope."""
    with app.app_context():
        row, token = ApiToken.make(db.session.get(User, user.id), "script", ["admin"])
        db.session.add(row)
        db.session.commit()
    return {"Authorization": f"Bearer {token}"}


def accounts_as_stored(app) -> dict[str, tuple]:
    """Return every account's role, state, password hash and session version, by name."""
    with app.app_context():
        return {
            user.name: (user.roles, user.disabled, user.password_hash, user.session_version)
            for user in db.session.scalars(db.select(User))
        }


def test_an_admin_token_lists_accounts_and_creates_one_without_the_admin_role(app, make_user):
    headers = admin_token(app, make_user("root", admin=True))
    client = app.test_client()
    assert client.get("/api/admin/users", headers=headers).status_code == 200
    response = client.post("/api/admin/users", json={"name": "carol"}, headers=headers)
    assert response.status_code == 201
    assert response.get_json()["roles"] == ["user"]
    assert sign_in(app.test_client(), "carol", response.get_json()["password"]).status_code == 302


@pytest.mark.parametrize(
    ("method", "path", "body", "done"),
    [
        ("PATCH", "/api/admin/users/{bob}", {"disabled": True}, 200),
        ("PATCH", "/api/admin/users/{bob}", {"admin": True}, 200),
        ("POST", "/api/admin/users/{bob}/password", {}, 200),
        ("POST", "/api/admin/users/{bob}/password", {"password": "chosen by mallory"}, 200),
        ("POST", "/api/admin/users", {"name": "mallory", "admin": True, "password": "x" * 8}, 201),
    ],
)
def test_an_admin_token_cannot_take_an_account_over(
    app, admin, make_user, method, path, body, done
):
    """A leaked admin token could set bob's password, disable him, make him or a new account an
    administrator: each is refused with the browser-only sentence, and only a signed-in browser
    does it."""
    bob = make_user("bob")
    url = path.format(bob=bob.id)
    before = accounts_as_stored(app)
    headers = admin_token(app, admin.user)
    refused = app.test_client().open(url, method=method, json=body, headers=headers)
    assert refused.status_code == 403
    assert refused.get_json()["error"]["message"] == (
        "An API token cannot open pages, create tokens, change a password or sign anyone out. "
        "Do this in a browser, signed in to Lookout."
    )
    assert accounts_as_stored(app) == before
    assert sign_in(app.test_client(), "bob", "password").status_code == 302
    assert admin.open(url, method=method, json=body).status_code == done
    assert accounts_as_stored(app) != before
