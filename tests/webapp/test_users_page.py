"""The admins' Users page in a real Chromium: create, promote, disable, refuse, set a password."""

from __future__ import annotations

import pytest

from tests.support.accounts import sign_in
from tests.support.pages import sign_in_page

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def row_of(page, name: str):
    """Return the table row of the account with this name."""
    return page.locator(f'#users tr[data-name="{name}"]')


def test_an_admin_manages_accounts_from_the_users_page(app, page, live_server, make_user):
    sign_in_page(page, live_server.url, make_user("root", admin=True), "/admin/")
    page.get_by_role("link", name="Users").click()
    page.wait_for_selector("#users[data-ready]")
    assert row_of(page, "root").locator("th").inner_text() == "root (you)"

    # Create by keyboard: type the name and submit with Enter.
    page.get_by_label("Name *").fill("carol")
    page.get_by_label("Name *").press("Enter")
    shown = page.get_by_role("textbox", name="Password of carol")
    shown.wait_for()
    password = shown.input_value()
    assert len(password) >= 16
    assert "it will not be shown again" in page.locator("#password-shown").inner_text()
    assert sign_in(app.test_client(), "carol", password).status_code == 302
    carol = row_of(page, "carol")
    assert carol.locator("td").nth(0).inner_text() == "user"
    assert carol.locator("td").nth(2).inner_text() == "never"
    page.screenshot(path="/tmp/users-created.png", full_page=True)

    # Make carol an admin, by keyboard; the focus stays on the button in the redrawn row.
    carol.get_by_role("button", name="Make carol an administrator").focus()
    page.keyboard.press("Enter")
    row_of(page, "carol").get_by_text("administrator", exact=True).wait_for()
    focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert focused == "Take the admin role from carol"

    # Disable carol: asked first, as it signs her out everywhere; Cancel changes nothing.
    session = app.test_client()
    assert sign_in(session, "carol", password).status_code == 302
    row_of(page, "carol").get_by_role("button", name="Disable carol").click()
    question = row_of(page, "carol").locator(".confirm")
    question.get_by_text("carol is signed out everywhere at once").wait_for()
    page.screenshot(path="/tmp/users-disable-asked.png", full_page=True)
    question.get_by_role("button", name="Cancel").click()
    assert question.is_hidden()
    assert row_of(page, "carol").locator("td").nth(1).inner_text() == "enabled"
    assert session.get("/api/me").status_code == 200
    focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert focused == "Disable carol"
    # Confirmed, her session ends, and the focus is back on the same action in the redrawn row.
    row_of(page, "carol").get_by_role("button", name="Disable carol").click()
    row_of(page, "carol").get_by_role("button", name="Yes, disable carol").click()
    row_of(page, "carol").get_by_text("disabled", exact=True).wait_for()
    assert session.get("/api/me").status_code == 401
    focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert focused == "Enable carol"

    # carol is disabled, so root is the only administrator left: it keeps its role.
    row_of(page, "root").get_by_role("button", name="Take the admin role from root").click()
    refusal = row_of(page, "root").locator(".row-status")
    refusal.get_by_text("root is the only administrator, so it keeps the admin role.").wait_for()
    assert "administrator" in row_of(page, "root").locator("td").nth(0).inner_text()
    page.screenshot(path="/tmp/users-last-admin.png", full_page=True)

    # Enable carol and give her a new password: shown once, the old one stops working.
    row_of(page, "carol").get_by_role("button", name="Enable carol").click()
    row_of(page, "carol").get_by_text("enabled", exact=True).wait_for()
    row_of(page, "carol").get_by_role("button", name="Set a new password for carol").click()
    row_of(page, "carol").get_by_role("button", name="Yes, set a new password").click()
    page.locator("#password-shown").get_by_text("New password for").wait_for()
    new_password = page.get_by_role("textbox", name="Password of carol").input_value()
    assert new_password != password
    assert sign_in(app.test_client(), "carol", password).status_code == 401
    assert sign_in(app.test_client(), "carol", new_password).status_code == 302
    page.screenshot(path="/tmp/users-password.png", full_page=True)

    page.reload()
    page.wait_for_selector("#users[data-ready]")
    assert new_password not in page.content()


def test_a_taken_name_is_refused_beside_the_field(app, page, live_server, make_user):
    root = make_user("root", admin=True)
    sign_in_page(page, live_server.url, root, "/admin/users", ready="#users[data-ready]")
    page.get_by_label("Name *").fill("root")
    page.get_by_role("button", name="Create account").click()
    page.locator("#user-name-error").get_by_text(
        "An account named 'root' already exists."
    ).wait_for()
    assert page.get_by_label("Name *").get_attribute("aria-invalid") == "true"
    assert page.locator("#password-shown").is_hidden()


def test_a_user_gets_403_on_the_users_page(page, live_server, make_user):
    sign_in_page(page, live_server.url, make_user("alice"), "/admin/users")
    assert "Only administrators may open this page." in page.content()
