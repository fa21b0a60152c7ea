"""The Account section of Settings in a real Chromium: a password change and "Sign out
everywhere", each refusing a copy of the session cookie taken before."""

from __future__ import annotations

import pytest
import requests

from tests.support.pages import sign_in_page
from webapp.auth.accounts import PASSWORDS_DIFFER

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def session_cookie(page) -> str:
    """Return the value of the page's session cookie, as someone copying it would."""
    return next(c["value"] for c in page.context.cookies() if c["name"] == "session")


def me_with(live_server, cookie: str) -> int:
    """Return the status of /api/me sent with the given session cookie."""
    response = requests.get(f"{live_server.url}/api/me", cookies={"session": cookie}, timeout=10)
    return response.status_code


def fill_password_form(page, current: str, new: str, again: str) -> None:
    """Type into Settings' three password fields, found by their labels."""
    page.get_by_label("Current password").fill(current)
    page.get_by_label("New password", exact=True).fill(new)
    page.get_by_label("New password again").fill(again)


def test_changing_the_password_in_settings_refuses_a_copied_cookie(page, live_server, make_user):
    sign_in_page(
        page, live_server.url, make_user("alice"), "/settings", ready="#plugins[data-ready]"
    )
    copied = session_cookie(page)
    assert me_with(live_server, copied) == 200

    fill_password_form(page, "wrong", "a new passphrase", "a new passphrase")
    page.get_by_role("button", name="Change password").click()
    error = page.locator("#current_password-error")
    error.wait_for()
    assert "Your current password is not right." in error.inner_text()
    assert page.get_by_label("Current password").get_attribute("aria-invalid") == "true"
    page.screenshot(path="/tmp/settings-password-error.png", full_page=True)
    assert me_with(live_server, copied) == 200

    # By keyboard only: type into each field and press Enter.
    fill_password_form(page, "password", "a new passphrase", "a new passphrase")
    page.keyboard.press("Enter")
    page.get_by_text("Your password is changed.").wait_for()
    page.screenshot(path="/tmp/settings-password-changed.png", full_page=True)
    assert page.url == f"{live_server.url}/settings#top"
    assert me_with(live_server, copied) == 401
    assert me_with(live_server, session_cookie(page)) == 200


def test_sign_out_everywhere_refuses_a_copied_cookie(page, live_server, make_user):
    sign_in_page(
        page, live_server.url, make_user("alice"), "/settings", ready="#plugins[data-ready]"
    )
    copied = session_cookie(page)
    button = page.get_by_role("button", name="Sign out everywhere")
    button.focus()
    page.keyboard.press("Enter")
    page.get_by_text("You are signed out in this browser and every other one.").wait_for()
    assert page.url.startswith(f"{live_server.url}/sign-in")
    assert me_with(live_server, copied) == 401


def test_two_new_passwords_that_differ_are_caught_before_sending_and_nothing_is_lost(
    page, live_server, make_user
):
    """Regression: a mismatch went to the server, whose answer emptied all three fields."""
    sign_in_page(
        page, live_server.url, make_user("alice"), "/settings", ready="#plugins[data-ready]"
    )
    copied = session_cookie(page)
    fill_password_form(page, "password", "a new passphrase", "a new passphrasE")
    page.get_by_role("button", name="Change password").click()
    error = page.locator("#confirm_password-error")
    error.wait_for()
    assert error.inner_text() == PASSWORDS_DIFFER
    again = page.get_by_label("New password again")
    assert again.get_attribute("aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == "confirm_password"
    page.screenshot(path="/tmp/settings-passwords-differ.png", full_page=True)
    # Nothing was sent: what was typed is still there, and the password is the same.
    assert page.get_by_label("Current password").input_value() == "password"
    assert page.get_by_label("New password", exact=True).input_value() == "a new passphrase"
    assert again.input_value() == "a new passphrasE"
    assert page.url == f"{live_server.url}/settings"
    assert me_with(live_server, copied) == 200

    # Made the same, the form is sent and the password changes.
    again.fill("a new passphrase")
    page.keyboard.press("Enter")
    page.get_by_text("Your password is changed.").wait_for()
    assert me_with(live_server, copied) == 401


def test_an_error_on_the_password_form_leaves_once_its_field_is_typed_again(
    page, live_server, make_user
):
    """Issue 25: a stale error stayed on the password form while the user re-typed."""
    sign_in_page(
        page, live_server.url, make_user("alice"), "/settings", ready="#plugins[data-ready]"
    )
    fill_password_form(page, "wrong", "a new passphrase", "a new passphrase")
    page.get_by_role("button", name="Change password").click()
    page.locator("#current_password-error").wait_for()
    current = page.get_by_label("Current password")
    current.fill("passwor")
    assert page.locator("#current_password-error").count() == 0
    assert current.get_attribute("aria-invalid") is None

    fill_password_form(page, "password", "a new passphrase", "a new passphrasE")
    page.get_by_role("button", name="Change password").click()
    page.locator("#confirm_password-error").wait_for()
    page.get_by_label("New password", exact=True).fill("a new passphrasE")
    assert page.locator("#confirm_password-error").count() == 0
    assert page.get_by_label("New password again").get_attribute("aria-invalid") is None
    page.screenshot(path="/tmp/settings-password-retyped.png", full_page=True)

    page.keyboard.press("Enter")
    page.get_by_text("Your password is changed.").wait_for()
    assert page.locator(".field-error").count() == 0
