"""Browser-side hardening: the Content Security Policy and friends, and the session cookie."""

from __future__ import annotations

import pytest

from tests.support.accounts import sign_in
from tests.support.pages import sign_in_page

PAGES = [
    "/",
    "/settings",
    "/settings/tokens",
    "/admin/plugins",
    "/admin/providers",
    "/admin/usage",
    "/admin/users",
    "/admin/health",
    "/docs/api",
]


def test_every_response_carries_the_policy_and_headers(client):
    for path in ["/sign-in", "/healthz", "/api/me", "/static/chat.js"]:
        with client.get(path) as response:
            headers = response.headers
        policy = headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"


def test_the_session_cookie_is_http_only_and_same_site(client, make_user):
    make_user("alice")
    cookie = sign_in(client, "alice", "password").headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_the_session_cookie_is_secure_when_lookout_is_served_over_https(make_app, make_user):
    app = make_app(PUBLIC_URL="https://lookout.example")
    with app.app_context():
        from core.extensions import db
        from core.models import User

        db.session.add(User.make("bob", "password"))
        db.session.commit()
    cookie = sign_in(app.test_client(), "bob", "password").headers["Set-Cookie"]
    assert "Secure" in cookie


@pytest.mark.chromium
def test_no_page_breaks_the_policy(page, live_server, make_user):
    messages = []
    page.on("console", lambda message: messages.append(message.text))
    sign_in_page(page, live_server.url, make_user("root", admin=True))
    for path in PAGES:
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
    assert [m for m in messages if "Content Security Policy" in m] == []
