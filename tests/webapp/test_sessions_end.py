"""Sessions that end: a copied session cookie stops working after sign-out, a new password and
disabling; the Account section of Settings; and sign-in doing the same work for every name."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import User
from core.models import accounts as account_models
from tests.support.accounts import csrf_token_from, sign_in


def copy_of(app, client):
    """Return a new client carrying a copy of the client's session cookie, as a thief would."""
    cookie = client.get_cookie("session")
    assert cookie is not None
    thief = app.test_client()
    thief.set_cookie("session", cookie.value)
    assert thief.get("/api/me").status_code == 200
    return thief


def settings_form(client) -> str:
    """Return the CSRF token of the Settings page's forms."""
    return csrf_token_from(client.get("/settings").get_data(as_text=True))


def change_password(client, current: str, new: str, again: str | None = None):
    """Post the Settings page's password form as a browser would."""
    return client.post(
        "/settings/password",
        data={
            "csrf_token": settings_form(client),
            "current_password": current,
            "new_password": new,
            "confirm_password": new if again is None else again,
        },
    )


def test_a_copied_cookie_is_refused_after_sign_out(app, signed_in_client):
    client = signed_in_client("alice")
    thief = copy_of(app, client)
    assert client.post("/sign-out").status_code == 302
    assert thief.get("/api/me").status_code == 401
    assert thief.get("/").headers["Location"].startswith("/sign-in")


def test_sign_out_ends_the_sessions_of_the_other_browsers_too(app, signed_in_client, make_user):
    user = make_user("alice")
    laptop, phone = signed_in_client(user), signed_in_client(user)
    laptop.post("/sign-out")
    assert phone.get("/api/me").status_code == 401


def test_a_new_password_keeps_this_browser_and_ends_the_others(app, signed_in_client, make_user):
    user = make_user("alice")
    client, other = signed_in_client(user), signed_in_client(user)
    thief = copy_of(app, client)
    response = change_password(client, "password", "a new passphrase")
    assert response.status_code == 302
    assert response.headers["Location"] == "/settings#top"
    page = client.get("/settings").get_data(as_text=True)
    assert "Your password is changed. Every other browser signed in as you is signed out." in page
    assert client.get("/api/me").status_code == 200
    assert thief.get("/api/me").status_code == 401
    assert other.get("/api/me").status_code == 401
    assert sign_in(app.test_client(), "alice", "password").status_code == 401
    assert sign_in(app.test_client(), "alice", "a new passphrase").status_code == 302


def test_an_api_token_keeps_working_after_a_password_change(signed_in_client, bearer):
    client = signed_in_client("alice")
    headers = bearer(client.user)
    change_password(client, "password", "a new passphrase")
    assert client.get("/api/me", headers=headers).status_code == 200


@pytest.mark.parametrize(
    ("current", "new", "again", "field", "sentence"),
    [
        ("wrong", "a new passphrase", None, "current_password", "Your current password is not"),
        ("password", "short", None, "new_password", "Use at least 8 characters for the password."),
        ("password", "alice123", "alice124", "confirm_password", "The two new passwords differ."),
    ],
)
def test_a_refused_password_change_says_why_beside_the_field(
    app, signed_in_client, make_user, current, new, again, field, sentence
):
    client = signed_in_client(make_user("alice"))
    thief = copy_of(app, client)
    response = change_password(client, current, new, again)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert f'id="{field}-error"' in page
    assert sentence in page
    assert thief.get("/api/me").status_code == 200  # nothing changed
    assert sign_in(app.test_client(), "alice", "password").status_code == 302


def test_the_name_itself_is_refused_as_a_password(app, signed_in_client, make_user):
    client = signed_in_client(make_user("alexander"))
    response = change_password(client, "password", "Alexander")
    assert response.status_code == 400
    assert "The password must not be the account&#39;s name." in response.get_data(as_text=True)


def test_wrong_current_passwords_count_as_failed_sign_ins(app, signed_in_client, make_user):
    client = signed_in_client(make_user("alice"))
    for _ in range(5):
        assert change_password(client, "guess", "a new passphrase").status_code == 400
    assert sign_in(app.test_client(), "alice", "password").status_code == 429


def test_sign_out_everywhere_ends_every_session(app, signed_in_client, make_user):
    user = make_user("alice")
    client, other = signed_in_client(user), signed_in_client(user)
    thief = copy_of(app, client)
    response = client.post(
        "/settings/sign-out-everywhere", data={"csrf_token": settings_form(client)}
    )
    assert response.headers["Location"] == "/sign-in"
    assert "You are signed out in this browser and every other one." in (
        client.get("/sign-in").get_data(as_text=True)
    )
    for each in (client, other, thief):
        assert each.get("/api/me").status_code == 401


def test_a_copied_cookie_is_refused_after_disabling_even_once_enabled_again(app, signed_in_client):
    client = signed_in_client("alice")
    thief = copy_of(app, client)
    runner = app.test_cli_runner()
    assert runner.invoke(args=["users", "disable", "alice"]).exit_code == 0
    assert thief.get("/api/me").status_code == 401
    assert runner.invoke(args=["users", "enable", "alice"]).exit_code == 0
    assert thief.get("/api/me").status_code == 401
    assert client.get("/api/me").status_code == 401


def test_a_new_password_from_the_command_line_ends_the_sessions(app, signed_in_client):
    client = signed_in_client("alice")
    thief = copy_of(app, client)
    result = app.test_cli_runner().invoke(args=["users", "set-password", "alice"])
    assert "its sessions ended" in result.output
    assert thief.get("/api/me").status_code == 401


def test_the_command_line_refuses_a_weak_password(app, make_user):
    make_user("alice")
    result = app.test_cli_runner().invoke(
        args=["users", "set-password", "alice", "--password", "pw"]
    )
    assert result.exit_code != 0
    assert "Use at least 8 characters for the password." in result.output


@pytest.fixture
def hash_checks(monkeypatch):
    """Count the password hashes checked (the costly part of a sign-in)."""
    checks = []
    real = account_models.check_password_hash

    def counted(password_hash, password):
        checks.append(password_hash)
        return real(password_hash, password)

    monkeypatch.setattr(account_models, "check_password_hash", counted)
    return checks


def test_an_unknown_name_costs_a_password_hash_like_a_known_one(client, make_user, hash_checks):
    make_user("alice")
    assert sign_in(client, "alice", "wrong").status_code == 401
    assert len(hash_checks) == 1
    assert sign_in(client, "nobody", "wrong").status_code == 401
    assert len(hash_checks) == 2
    assert hash_checks[1].startswith(hash_checks[0].split("$")[0])  # the same kind of hash


def test_sign_in_records_when_it_happened(app, make_user, signed_in_client):
    user = make_user("alice")
    with app.app_context():
        assert db.session.get(User, user.id).last_signed_in_at is None
    signed_in_client(user)
    with app.app_context():
        assert db.session.get(User, user.id).last_signed_in_at is not None


def test_wrong_current_passwords_lock_the_name_for_sign_in_and_for_the_form(
    app, signed_in_client, make_user
):
    """The current-password field guesses the same password as sign-in, so it counts and locks
    the same way: once locked, even the right password is refused, with the lock's sentence."""
    user = make_user("alice")
    client = signed_in_client(user)
    for _ in range(5):
        assert change_password(client, "wrong", "a new passphrase").status_code == 400
    locked = change_password(client, "password", "a new passphrase")
    assert locked.status_code == 429
    assert "Too many failed sign-ins for this name. Wait 15 minutes" in locked.get_data(
        as_text=True
    )
    assert sign_in(app.test_client(), "alice", "password").status_code == 429
    with app.app_context():
        assert db.session.get(User, user.id).check_password("password")


def test_a_locked_name_is_refused_by_the_form_before_any_hash_is_checked(
    app, signed_in_client, make_user
):
    """Locked by failed sign-ins elsewhere, the form refuses even the right password: the
    answer cannot tell a right guess from a wrong one."""
    user = make_user("alice")
    client = signed_in_client(user)
    for _ in range(5):
        sign_in(app.test_client(), "alice", "wrong")
    right = change_password(client, "password", "a new passphrase")
    wrong = change_password(client, "wrong", "a new passphrase")
    assert right.status_code == wrong.status_code == 429
    with app.app_context():
        assert db.session.get(User, user.id).check_password("password")


def test_a_bearer_token_cannot_use_the_password_form(app, client, make_user, make_token):
    user = make_user("alice")
    response = client.post(
        "/settings/password",
        data={
            "current_password": "password",
            "new_password": "a new passphrase",
            "confirm_password": "a new passphrase",
        },
        headers={"Authorization": f"Bearer {make_token(user)}"},
    )
    assert response.status_code == 403
    assert "Do this in a browser, signed in to Lookout." in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(User, user.id).check_password("password")
