"""API tokens: shown once, listed without values, revoked, and used as Bearer without CSRF."""

import hashlib
import re
from datetime import datetime, timedelta

from core.extensions import db
from core.models import ApiToken, User
from core.models.base import utcnow
from core.scopes import SCOPES
from webapp.auth.scopes import needed_scope


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
    created = client.post("/api/conversations", json={"title": "Trip"}, headers=headers)
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


def new_token(client, **body) -> dict:
    """Create a token through the API as the signed-in browser; return the answer's body."""
    response = client.post("/api/tokens", json={"name": "script", **body})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def test_a_new_token_holds_the_chat_scope_unless_told_otherwise(signed_in_client):
    body = new_token(signed_in_client("alice"))
    assert body["scopes"] == ["chat"]
    assert body["expiresAt"] is None


def test_a_chat_token_chats_but_cannot_use_the_admin_api(client, signed_in_client):
    token = new_token(signed_in_client("ada", admin=True), scopes=["chat"])["token"]
    headers = {"Authorization": f"Bearer {token}"}
    chatted = client.post("/api/conversations", json={"title": "t"}, headers=headers)
    assert chatted.status_code == 201
    refused = client.get("/api/admin/users", headers=headers)
    assert refused.status_code == 403
    message = refused.get_json()["error"]["message"]
    assert message.startswith("This API token does not have the admin scope")
    assert "Create a token with the admin scope under Settings → API tokens" in message


def test_an_admin_token_uses_the_admin_api_but_cannot_chat(client, signed_in_client):
    token = new_token(signed_in_client("ada", admin=True), scopes=["admin"])["token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/admin/users", headers=headers).status_code == 200
    refused = client.get("/api/conversations", headers=headers)
    assert refused.status_code == 403
    assert "does not have the chat scope" in refused.get_json()["error"]["message"]
    assert client.get("/api/me", headers=headers).get_json()["name"] == "ada"


def test_only_an_administrator_may_make_a_token_with_the_admin_scope(signed_in_client):
    response = signed_in_client("alice").post(
        "/api/tokens", json={"name": "sneaky", "scopes": ["chat", "admin"]}
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"] == {
        "scopes": ["Only an administrator's token may have the admin scope. Choose chat."]
    }


def test_an_unknown_scope_is_refused_with_the_ones_there_are(signed_in_client):
    response = signed_in_client("alice").post(
        "/api/tokens", json={"name": "x", "scopes": ["everything"]}
    )
    assert response.status_code == 400
    assert "Choose scopes among: chat, admin." in response.get_data(as_text=True)


def test_a_token_cannot_make_tokens_open_pages_or_sign_anyone_out(
    app, client, make_user, make_token, signed_in_client
):
    alice = make_user("alice")
    browser = signed_in_client(alice)
    headers = {"Authorization": f"Bearer {make_token(alice)}"}
    minted = client.post("/api/tokens", json={"name": "more"}, headers=headers)
    assert minted.status_code == 403
    assert minted.get_json()["error"]["message"].startswith(
        "An API token cannot open pages, create tokens, change a password or sign anyone out."
    )
    for path in ("/", "/settings", "/settings/tokens", "/admin/"):
        page = client.get(path, headers=headers)
        assert page.status_code == 403
        assert "Do this in a browser, signed in to Lookout." in page.get_data(as_text=True)
    for path in ("/sign-out", "/settings/sign-out-everywhere"):
        assert client.post(path, headers=headers).status_code == 403
    assert browser.get("/api/me").status_code == 200  # still signed in
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(ApiToken)) == 1


def test_a_token_may_list_its_accounts_tokens_and_revoke_itself(client, make_user, make_token):
    token = make_token(make_user("alice"))
    headers = {"Authorization": f"Bearer {token}"}
    listed = client.get("/api/tokens", headers=headers).get_json()["tokens"]
    assert client.delete(f"/api/tokens/{listed[0]['id']}", headers=headers).status_code == 204
    assert client.get("/api/me", headers=headers).status_code == 401


def test_an_expired_token_is_refused_with_a_sentence_saying_so(app, client, signed_in_client):
    body = new_token(signed_in_client("alice"), expiresInDays=30)
    headers = {"Authorization": f"Bearer {body['token']}"}
    assert client.get("/api/conversations", headers=headers).status_code == 200
    with app.app_context():
        row = db.session.get(ApiToken, body["id"])
        row.expires_at = utcnow() - timedelta(seconds=1)
        db.session.commit()
        when = row.expires_at.strftime("%Y-%m-%d %H:%M")
    refused = client.get("/api/conversations", headers=headers)
    assert refused.status_code == 401
    assert refused.get_json()["error"]["message"] == (
        f"This API token expired on {when} UTC. Create a new one under Settings → API tokens "
        "(or with flask --app webapp tokens create), and use it instead."
    )


def test_a_token_expires_the_number_of_days_asked_for(signed_in_client):
    before = utcnow()
    body = new_token(signed_in_client("alice"), expiresInDays=7)
    expires = datetime.fromisoformat(body["expiresAt"])
    assert before + timedelta(days=7) <= expires <= utcnow() + timedelta(days=7)
    response = signed_in_client("bob").post("/api/tokens", json={"name": "x", "expiresInDays": 0})
    assert response.get_json()["error"]["fields"] == {
        "expiresInDays": ["Give a number of days from 1 to 3650."]
    }


def every_route(app):
    """Yield (method, path, view) for every route of the app, path values filled in."""
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[^<>:]+:)?([^<>]+)>", "x", rule.rule)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield method, path, app.view_functions[rule.endpoint]


def test_every_route_asks_a_token_for_its_scope(app, client, make_user, make_token):
    """Route by route, an administrator's chat-only token and admin-only token each reach only
    what their scope covers; no token reaches a page or a browser-only action."""
    ada = make_user("ada", admin=True)
    with app.app_context():
        tokens = {}
        for scope in SCOPES:
            row, tokens[scope] = ApiToken.make(db.session.get(User, ada.id), scope, [scope])
            db.session.add(row)
        db.session.commit()
    checked = 0
    for method, path, view in every_route(app):
        needed = needed_scope(view)
        if needed in (None, "any") and not getattr(view, "browser_only", False):
            continue
        for scope, token in tokens.items():
            headers = {"Authorization": f"Bearer {token}"}
            answer = client.open(path, method=method, headers=headers)
            text = answer.get_data(as_text=True)
            if getattr(view, "browser_only", False) or not path.startswith(("/api/", "/v1/")):
                assert answer.status_code == 403, (method, path, scope)
                assert "Do this in a browser, signed in to Lookout." in text, (method, path)
            elif needed != scope:
                assert answer.status_code == 403, (method, path, scope)
                assert f"does not have the {needed} scope" in text, (method, path, scope)
            else:
                assert "scope" not in text, (method, path, scope)
            checked += 1
    assert checked > 100
