"""API tokens: shown once, listed without values, revoked, and used as Bearer without CSRF."""

import hashlib
from datetime import timedelta

from webapp.extensions import db
from webapp.models import ApiToken, User


def test_creating_a_token_shows_it_once_and_stores_only_its_hash(app, signed_in_client):
    client = signed_in_client("alice")
    response = client.post("/api/tokens", json={"name": "laptop"})
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) >= {"id", "name", "token"}
    assert body["name"] == "laptop"
    with app.app_context():
        row = db.session.get(ApiToken, body["id"])
        assert row.token_hash == hashlib.sha256(body["token"].encode()).hexdigest()
    listed = client.get("/api/tokens").get_json()["tokens"]
    assert [token["name"] for token in listed] == ["laptop"]
    assert "token" not in listed[0]
    assert body["token"] not in client.get("/api/tokens").get_data(as_text=True)


def test_a_token_needs_a_name(signed_in_client):
    response = signed_in_client("alice").post("/api/tokens", json={})
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"] == {"name": ["A name is required."]}


def test_a_bearer_token_works_without_csrf_or_session(client, make_user, bearer):
    headers = bearer(make_user("alice"))
    me = client.get("/api/me", headers=headers)
    assert me.status_code == 200
    assert me.get_json()["name"] == "alice"
    created = client.post("/api/tokens", json={"name": "ci"}, headers=headers)
    assert created.status_code == 201
    assert "Set-Cookie" not in created.headers


def test_a_bearer_token_records_when_it_was_last_used(app, client, make_user, make_token):
    token = make_token(make_user("alice"))
    client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    with app.app_context():
        assert db.session.scalar(db.select(ApiToken)).last_used_at is not None


def test_a_tokens_use_is_written_at_most_once_a_minute(app, client, make_user, make_token):
    token = make_token(make_user("alice"))
    headers = {"Authorization": f"Bearer {token}"}
    client.get("/api/me", headers=headers)
    with app.app_context():
        first = db.session.scalar(db.select(ApiToken)).last_used_at
    client.get("/api/me", headers=headers)
    with app.app_context():
        row = db.session.scalar(db.select(ApiToken))
        assert row.last_used_at == first
        row.last_used_at = first - timedelta(minutes=2)
        db.session.commit()
    client.get("/api/me", headers=headers)
    with app.app_context():
        assert db.session.scalar(db.select(ApiToken)).last_used_at > first


def test_an_unknown_bearer_token_is_refused_even_with_a_session(signed_in_client):
    client = signed_in_client("alice")
    response = client.get("/api/me", headers={"Authorization": "Bearer lk_nonsense"})
    assert response.status_code == 401
    assert response.get_json()["error"]["message"].startswith("Sign in")


def test_a_disabled_accounts_tokens_are_refused(app, client, make_user, make_token):
    user = make_user("mallory")
    token = make_token(user)
    with app.app_context():
        db.session.get(User, user.id).disabled = True
        db.session.commit()
    response = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401


def test_revoking_a_token_stops_it_working(client, make_user, make_token):
    alice = make_user("alice")
    keep = {"Authorization": f"Bearer {make_token(alice, 'keep')}"}
    doomed_token = make_token(alice, "doomed")
    doomed = next(
        row
        for row in client.get("/api/tokens", headers=keep).get_json()["tokens"]
        if row["name"] == "doomed"
    )
    assert client.delete(f"/api/tokens/{doomed['id']}", headers=keep).status_code == 204
    response = client.get("/api/me", headers={"Authorization": f"Bearer {doomed_token}"})
    assert response.status_code == 401
    names = [row["name"] for row in client.get("/api/tokens", headers=keep).get_json()["tokens"]]
    assert names == ["keep"]


def test_nobody_can_revoke_another_users_token(client, make_user, make_token, bearer):
    alice_token = make_token(make_user("alice"))
    alice = {"Authorization": f"Bearer {alice_token}"}
    token_id = client.get("/api/tokens", headers=alice).get_json()["tokens"][0]["id"]
    response = client.delete(f"/api/tokens/{token_id}", headers=bearer(make_user("bob")))
    assert response.status_code == 404
    assert client.get("/api/me", headers=alice).status_code == 200
