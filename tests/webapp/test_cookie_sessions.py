"""Session cookies signed by a serializer made once per secret key: a new key (or fallback)
takes effect on the very next request."""

from __future__ import annotations


def test_a_new_secret_key_ends_sessions_signed_with_the_old_one_at_once(app, signed_in_client):
    client = signed_in_client("alice")
    assert client.get("/api/me").status_code == 200
    app.config["SECRET_KEY"] = "a-new-secret-key"
    assert client.get("/api/me").status_code == 401


def test_the_old_key_as_a_fallback_keeps_sessions_at_once(app, signed_in_client):
    client = signed_in_client("alice")
    old = app.config["SECRET_KEY"]
    app.config["SECRET_KEY"] = "a-new-secret-key"
    assert client.get("/api/me").status_code == 401
    app.config["SECRET_KEY_FALLBACKS"] = [old]
    assert client.get("/api/me").status_code == 200
