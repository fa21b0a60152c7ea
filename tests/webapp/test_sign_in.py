"""Signing in and out through the pages, with hashed passwords and CSRF-protected forms."""

import time

import pytest

from core.extensions import db
from core.models import User
from tests.support.accounts import csrf_token_from, sign_in


def test_sign_in_with_the_right_password_opens_the_home_page(client, make_user):
    make_user("alice")
    response = sign_in(client, "alice", "password")
    assert response.status_code == 302
    assert response.headers["Location"] == "/"
    page = client.get("/").get_data(as_text=True)
    assert "alice" in page
    assert "Sign out" in page


def test_passwords_are_stored_hashed(app, make_user):
    make_user("alice", password="s3cret-words")
    with app.app_context():
        stored = db.session.scalar(db.select(User).filter_by(name="alice")).password_hash
    assert "s3cret-words" not in stored
    assert stored.startswith(("scrypt:", "pbkdf2:"))


def test_a_wrong_password_is_refused_with_a_sentence(client, make_user):
    """Someone who forgot their password was told only to check it and try again."""
    make_user("alice")
    response = sign_in(client, "alice", "wrong")
    assert response.status_code == 401
    page = response.get_data(as_text=True)
    assert (
        "That name and password do not match. Check them and try again; if you forgot your "
        "password, ask an administrator to set a new one in Admin → Users."
    ) in page
    assert 'value="alice"' in page  # the name is kept; only the password is typed again
    assert client.get("/").status_code == 302


def test_an_unknown_name_gets_the_same_answer_as_a_wrong_password(client):
    response = sign_in(client, "nobody", "password")
    assert response.status_code == 401
    assert "That name and password do not match" in response.get_data(as_text=True)


def test_the_home_page_sends_strangers_to_sign_in(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/sign-in")


def test_sign_out_ends_the_session(signed_in_client):
    client = signed_in_client("alice")
    assert client.post("/sign-out").status_code == 302
    # Regression: the sign-in form came back with no word that signing out had worked.
    assert "You are signed out, in this browser and every other one." in client.get(
        "/sign-in"
    ).get_data(as_text=True)
    assert client.get("/").status_code == 302
    assert client.get("/api/me").status_code == 401


def test_a_disabled_account_cannot_sign_in(client, make_user):
    make_user("mallory", disabled=True)
    response = sign_in(client, "mallory", "password")
    assert response.status_code == 403
    # Regression: it named only a command, with NAME in it, to someone who has no shell.
    assert (
        "This account is disabled. Ask an administrator to enable it in Admin → Users "
        "(or with flask --app webapp users enable mallory)."
    ) in response.get_data(as_text=True)
    assert client.get("/api/me").status_code == 401


def test_disabling_an_account_ends_its_open_sessions(app, signed_in_client):
    client = signed_in_client("alice")
    assert client.get("/api/me").status_code == 200
    with app.app_context():
        db.session.get(User, client.user.id).disabled = True
        db.session.commit()
    assert client.get("/api/me").status_code == 401


def test_a_user_disabled_while_signed_in_is_told_why_on_the_sign_in_page(signed_in_client):
    """Regression: the next page sent them to the sign-in form with no word of why."""
    alice = signed_in_client("alice")
    admin = signed_in_client("root", admin=True)
    disabled = admin.patch(f"/api/admin/users/{alice.user.id}", json={"disabled": True})
    assert disabled.status_code == 200
    response = alice.get("/settings")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/sign-in")
    page = alice.get(response.headers["Location"]).get_data(as_text=True)
    assert (
        "You were signed out because an administrator disabled your account (alice). Ask an "
        "administrator to enable it again in Admin → Users "
        "(or with flask --app webapp users enable alice)."
    ) in page
    # Said once: the next visit is a plain sign-in page, and alice is still signed out.
    assert "disabled" not in alice.get("/sign-in").get_data(as_text=True)
    assert alice.get("/api/me").status_code == 401


def test_a_session_ended_elsewhere_gets_no_word_about_a_disabled_account(
    signed_in_client, make_user
):
    user = make_user("alice")
    laptop, phone = signed_in_client(user), signed_in_client(user)
    laptop.post("/sign-out")  # ends the phone's session too, with its cookie still there
    response = phone.get("/settings")
    assert response.headers["Location"].startswith("/sign-in")
    assert "disabled" not in phone.get(response.headers["Location"]).get_data(as_text=True)


def test_the_sign_in_form_without_its_csrf_token_is_refused(client, make_user):
    make_user("alice")
    response = client.post("/sign-in", data={"name": "alice", "password": "password"})
    assert response.status_code == 400
    assert client.get("/").status_code == 302


def test_sign_out_without_a_csrf_token_is_refused(app, make_user):
    make_user("alice")
    client = app.test_client()
    sign_in(client, "alice", "password")
    assert client.post("/sign-out").status_code == 400
    assert client.get("/").status_code == 200


def test_a_json_request_with_the_session_but_no_csrf_header_is_refused(app, make_user):
    make_user("alice")
    client = app.test_client()
    sign_in(client, "alice", "password")
    response = client.post("/api/tokens", json={"name": "laptop"})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert "CSRF" in error["message"]
    assert error["fields"] == {}


def test_a_json_request_with_the_session_and_the_csrf_header_passes(app, make_user):
    make_user("alice")
    client = app.test_client()
    sign_in(client, "alice", "password")
    token = csrf_token_from(client.get("/").get_data(as_text=True))
    response = client.post("/api/tokens", json={"name": "laptop"}, headers={"X-CSRFToken": token})
    assert response.status_code == 201


@pytest.mark.parametrize(
    ("next_page", "location"),
    [
        ("//evil.example/", "/"),
        ("/%5Cevil.example/", "/"),  # a backslash: browsers read /\\host as //host
        ("/%09/evil.example/", "/"),  # a control character
        ("https://evil.example/", "/"),
        ("/settings?tab=account", "/settings?tab=account"),
    ],
)
def test_sign_in_returns_to_a_local_next_page_only(client, make_user, next_page, location):
    make_user("alice")
    page = client.get(f"/sign-in?next={next_page}")
    token = csrf_token_from(page.get_data(as_text=True))
    response = client.post(
        f"/sign-in?next={next_page}",
        data={"name": "alice", "password": "password", "csrf_token": token},
    )
    assert response.headers["Location"] == location


def test_too_many_failures_lock_the_name_whatever_the_password(client, make_user):
    make_user("alice")
    for _ in range(5):
        assert sign_in(client, "alice", "wrong").status_code == 401
    locked = sign_in(client, "alice", "password")
    assert locked.status_code == 429
    assert "Too many failed sign-ins for this name. Wait 15 minutes" in locked.get_data(
        as_text=True
    )
    assert (
        "set a new password in Admin → Users (or with flask --app webapp users set-password "
        "alice)." in locked.get_data(as_text=True)
    )
    assert client.get("/").status_code == 302  # still signed out
    make_user("bob")
    assert sign_in(client, "bob", "password").status_code == 302  # other names are not locked


def test_a_success_forgets_earlier_failures(app, make_user):
    make_user("alice")
    for _ in range(2):
        client = app.test_client()
        for _ in range(4):
            assert sign_in(client, "alice", "wrong").status_code == 401
        assert sign_in(client, "alice", "password").status_code == 302


def test_unknown_names_are_counted_too_so_the_answer_reveals_nothing(client):
    for _ in range(5):
        assert sign_in(client, "nobody", "password").status_code == 401
    assert sign_in(client, "Nobody ", "password").status_code == 429


def test_the_lock_ends_with_its_window(app, client, make_user):
    from core.extensions import get_redis
    from webapp.auth.throttle import _key

    make_user("alice")
    for _ in range(5):
        sign_in(client, "alice", "wrong")
    with app.test_request_context():
        get_redis().expire(_key("name", "alice"), 1)
    time.sleep(1.2)
    assert sign_in(client, "alice", "password").status_code == 302


def test_setting_a_new_password_lifts_the_lock(app, client, make_user):
    make_user("alice")
    for _ in range(5):
        sign_in(client, "alice", "wrong")
    result = app.test_cli_runner().invoke(
        args=["users", "set-password", "alice", "--password", "new words"]
    )
    assert result.exit_code == 0, result.output
    assert sign_in(client, "alice", "new words").status_code == 302


def test_too_many_failures_from_one_address_lock_it_for_every_name(make_app):
    app = make_app(SIGN_IN_MAX_FAILURES_PER_ADDRESS=3)
    with app.app_context():
        db.session.add(User.make("carol", "password"))
        db.session.commit()
    client = app.test_client()
    for name in ("ann", "ben", "cid"):
        assert sign_in(client, name, "guess").status_code == 401
    refused = sign_in(client, "carol", "password")
    assert refused.status_code == 429
    assert "Too many failed sign-ins from your network address" in refused.get_data(as_text=True)


def test_behind_a_trusted_proxy_the_forwarded_address_is_the_one_counted(make_app):
    app = make_app(SIGN_IN_MAX_FAILURES_PER_ADDRESS=3, TRUSTED_PROXIES=1)
    with app.app_context():
        db.session.add(User.make("carol", "password"))
        db.session.commit()
    attacker, neighbour = app.test_client(), app.test_client()
    attacker.environ_base["HTTP_X_FORWARDED_FOR"] = "203.0.113.7"
    neighbour.environ_base["HTTP_X_FORWARDED_FOR"] = "198.51.100.2"
    for name in ("ann", "ben", "cid"):
        sign_in(attacker, name, "guess")
    assert sign_in(attacker, "carol", "password").status_code == 429
    assert sign_in(neighbour, "carol", "password").status_code == 302


def test_a_csrf_token_from_before_sign_in_is_refused_after_it(app, make_user):
    """A page loaded before sign-in (say, one an attacker served in the same browser) holds a
    CSRF token; signing in makes a new one, so the old one cannot change the account."""
    make_user("alice")
    client = app.test_client()
    before = csrf_token_from(client.get("/sign-in").get_data(as_text=True))
    signed_in = client.post(
        "/sign-in", data={"name": "alice", "password": "password", "csrf_token": before}
    )
    assert signed_in.status_code == 302
    stale = client.post("/api/conversations", json={"title": "t"}, headers={"X-CSRFToken": before})
    assert stale.status_code == 400
    assert "CSRF" in stale.get_json()["error"]["message"]
    after = csrf_token_from(client.get("/").get_data(as_text=True))
    assert after != before
    fresh = client.post("/api/conversations", json={"title": "t"}, headers={"X-CSRFToken": after})
    assert fresh.status_code == 201
