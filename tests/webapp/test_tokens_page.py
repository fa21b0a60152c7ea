"""The API tokens page in a real Chromium: a token shown once works as Bearer until revoked."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.pages import sign_in_page

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def sign_in(page, live_server, user, path: str = "/settings/tokens"):
    """Sign in and open `path`, waiting until the token list is drawn."""
    sign_in_page(page, live_server.url, user, path, ready="#tokens[data-ready]")


def test_a_new_token_is_shown_once_works_as_bearer_and_stops_when_revoked(
    app, page, live_server, make_user
):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    sign_in(page, live_server, make_user("alice"))
    assert "You have no API tokens." in page.locator("#tokens").inner_text()
    page.get_by_label("Token name *").fill("laptop")
    page.get_by_role("button", name="Create token").click()
    shown = page.get_by_label("New token laptop")
    shown.wait_for()
    token = shown.input_value()
    assert len(token) >= 32
    box = page.locator("#token-created")
    assert "it will not be shown again" in box.inner_text()
    page.locator("#tokens tr[data-token]").wait_for()
    page.screenshot(path="/tmp/tokens-created.png", full_page=True)
    copy = box.get_by_role("button", name="Copy the token laptop")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == token

    client = app.test_client()
    me = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert me.get_json()["name"] == "alice"

    page.reload()
    page.wait_for_selector("#tokens[data-ready]")
    assert token not in page.content()
    row = page.locator("#tokens tr", has_text="laptop")
    assert row.locator("td").nth(1).inner_text() == "chat"
    assert row.locator("td").nth(3).inner_text() != "never"  # used just now, by /api/me
    assert row.locator("td").nth(4).inner_text() != "never"  # the page's default: 90 days
    row.get_by_role("button", name="Revoke laptop").click()
    row.get_by_role("button", name="Yes, revoke").click()
    page.get_by_text("You have no API tokens.").wait_for()
    page.screenshot(path="/tmp/tokens-revoked.png", full_page=True)
    gone = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert gone.status_code == 401


def test_an_admin_makes_an_admin_token_that_never_expires_and_a_user_is_not_offered_one(
    app, page, live_server, make_user
):
    sign_in(page, live_server, make_user("ada", admin=True))
    page.get_by_label("Token name *").fill("ops")
    page.get_by_label("chat", exact=True).uncheck()
    page.get_by_label("admin", exact=True).check()
    page.get_by_label("Expires").select_option(label="never")
    page.get_by_role("button", name="Create token").click()
    token = page.get_by_label("New token ops").input_value()
    row = page.locator("#tokens tr", has_text="ops")
    row.wait_for()
    assert row.locator("td").nth(1).inner_text() == "admin"
    assert row.locator("td").nth(4).inner_text() == "never"
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/admin/users", headers=headers).status_code == 200
    assert client.get("/api/conversations", headers=headers).status_code == 403

    page.context.clear_cookies()
    sign_in(page, live_server, make_user("alice"))
    assert page.locator("#token-scopes input").count() == 1
    assert page.get_by_label("chat", exact=True).is_checked()


def test_a_token_without_a_name_is_refused_beside_the_field(page, live_server, make_user):
    sign_in(page, live_server, make_user("alice"))
    page.get_by_role("button", name="Create token").click()
    error = page.locator("#token-name-error")
    error.get_by_text("A name is required.").wait_for()
    assert page.get_by_label("Token name *").get_attribute("aria-invalid") == "true"
    assert page.locator("#token-created").is_hidden()
    page.screenshot(path="/tmp/tokens-error.png", full_page=True)


def test_the_navigation_links_to_the_tokens_page(page, live_server, make_user):
    sign_in(page, live_server, make_user("alice"), "/settings/tokens")
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_selector("#tokens[data-ready]")
    assert page.url == f"{live_server.url}/settings/tokens"


def test_strangers_are_sent_to_sign_in(client):
    response = client.get("/settings/tokens")
    assert response.status_code == 302
    assert "/sign-in" in response.headers["Location"]
