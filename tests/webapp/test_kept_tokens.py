"""Bearer tokens kept per process: read once, and every change to a token or its user refused or
shown on the very next request, whichever process (app) made the change and whichever serves."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import event

from core.extensions import db, get_redis
from core.models import ApiToken, User
from core.models.base import utcnow
from webapp.auth import accounts
from webapp.auth.kept_tokens import VERSION_KEY


@pytest.fixture
def other(app, make_app):
    """A second app on the same database and Redis: another web process, with its own rows kept."""
    return make_app(DATABASE_URL=app.config["SQLALCHEMY_DATABASE_URI"])


@pytest.fixture
def alice(make_user, make_token):
    """Alice's user and the headers of her token."""
    user = make_user("alice")
    return user, {"Authorization": f"Bearer {make_token(user)}"}


def token_reads(app, run) -> int:
    """Return how many statements reading api_tokens ``run()`` sent through the app's engine."""
    seen = []

    def note(_conn, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("SELECT") and "api_tokens" in statement:
            seen.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", note)
    try:
        run()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return len(seen)


def test_a_token_and_its_user_are_read_once_per_process(other, alice):
    _user, headers = alice
    served = other.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    again = token_reads(other, lambda: served.get("/api/me", headers=headers))
    assert again == 0


def test_a_revoked_token_is_refused_at_once_by_another_process(app, other, alice):
    _user, headers = alice
    served = other.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    token_id = app.test_client().get("/api/tokens", headers=headers).get_json()["tokens"][0]["id"]
    assert app.test_client().delete(f"/api/tokens/{token_id}", headers=headers).status_code == 204
    assert served.get("/api/me", headers=headers).status_code == 401


def test_a_disabled_user_is_refused_at_once_by_another_process(app, other, alice):
    user, headers = alice
    served = other.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    with app.app_context():
        accounts.set_disabled(db.session.get(User, user.id), True)
    assert served.get("/api/me", headers=headers).status_code == 401


def test_a_deleted_user_is_refused_at_once_by_another_process(app, other, alice):
    user, headers = alice
    served = other.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    with app.app_context():
        db.session.delete(db.session.get(User, user.id))
        db.session.commit()
    assert served.get("/api/me", headers=headers).status_code == 401


def test_a_new_role_shows_at_once_in_another_process(app, other, alice, make_user):
    make_user("root", admin=True)  # so that alice is not the last administrator either way
    user, headers = alice
    served = other.test_client()
    assert served.get("/api/me", headers=headers).get_json()["roles"] == ["user"]
    with app.app_context():
        accounts.set_admin(db.session.get(User, user.id), True)
    assert "admin" in served.get("/api/me", headers=headers).get_json()["roles"]


def test_scopes_changed_in_bulk_take_effect_at_once_in_another_process(app, other, alice):
    _user, headers = alice
    served = other.test_client()
    assert served.get("/api/conversations", headers=headers).status_code == 200
    with app.app_context():
        db.session.execute(db.update(ApiToken).values(scopes=["admin"]))
        db.session.commit()
    assert served.get("/api/conversations", headers=headers).status_code == 403


def test_an_expiry_set_elsewhere_is_refused_at_once(app, other, alice):
    _user, headers = alice
    served = other.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    with app.app_context():
        db.session.scalar(db.select(ApiToken)).expires_at = utcnow() - timedelta(seconds=1)
        db.session.commit()
    refused = served.get("/api/me", headers=headers)
    assert refused.status_code == 401
    assert "expired" in refused.get_json()["error"]["message"]


def test_a_kept_token_whose_expiry_passes_is_refused(app, other, alice, monkeypatch):
    """The expiry is checked on every request against the kept row, not only when it is read."""
    _user, headers = alice
    with app.app_context():
        db.session.scalar(db.select(ApiToken)).expires_at = utcnow() + timedelta(hours=1)
        db.session.commit()
    served = other.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    later = utcnow() + timedelta(hours=2)
    monkeypatch.setattr("core.models.accounts.utcnow", lambda: later)
    assert served.get("/api/me", headers=headers).status_code == 401


def test_recording_a_tokens_use_raises_no_version(app, alice):
    _user, headers = alice
    with app.app_context():
        before = get_redis().get(VERSION_KEY)
    client = app.test_client()
    client.get("/api/me", headers=headers)
    with app.app_context():
        assert db.session.scalar(db.select(ApiToken)).last_used_at is not None
        assert get_redis().get(VERSION_KEY) == before


def test_without_redis_every_request_reads_the_token(app, make_app, alice):
    user, headers = alice
    lost = make_app(
        DATABASE_URL=app.config["SQLALCHEMY_DATABASE_URI"], REDIS_URL="redis://127.0.0.1:1/0"
    )
    served = lost.test_client()
    assert served.get("/api/me", headers=headers).status_code == 200
    assert token_reads(lost, lambda: served.get("/api/me", headers=headers)) == 1
    with app.app_context():
        accounts.set_disabled(db.session.get(User, user.id), True)
    assert served.get("/api/me", headers=headers).status_code == 401
