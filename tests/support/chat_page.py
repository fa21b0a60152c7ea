"""Driving the chat page in Chromium: users with tokens, signing in, sending, waiting."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import expect

from core.extensions import db
from core.models import ApiToken, User
from tests.support.pages import sign_in_page

# A bound only a hang reaches (a reply ends within a second or two here, Chromium and all): a
# busy machine must not fail a wait that the page would have met.
WAIT_MS = 60_000


def token_for(app, admin=False) -> tuple[User, str]:
    """Store a new user (password "password") with an API token; return both."""
    with app.app_context():
        user = User.make(f"u-{uuid.uuid4().hex[:8]}", "password", admin=admin)
        row, token = ApiToken.make(user, "tests")
        db.session.add_all([user, row])
        db.session.commit()
        db.session.refresh(user)
        db.session.expunge(user)
    return user, token


@contextmanager
def themed_page(browser, color_scheme: str, **options) -> Iterator:
    """Yield a page of a new browser context whose system theme is ``color_scheme`` ("light" or
    "dark"), with the context's other ``options`` (viewport, has_touch); closed after."""
    context = browser.new_context(color_scheme=color_scheme, **options)
    try:
        yield context.new_page()
    finally:
        context.close()


def sign_in(page, base_url: str, user, path: str = "/"):
    """Sign in and open `path`, waiting until the chat script is ready."""
    sign_in_page(page, base_url, user, path, ready="#chat[data-ready]")


def open_chat(page, chat_server, user, model_id, path="/"):
    """Sign in, open the chat and pick the test's model."""
    sign_in(page, chat_server.url, user, path)
    page.get_by_label("Model").select_option(model_id)


def send(page, text: str):
    """Type a message and press Enter."""
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")


def last_reply(page):
    """The last reply on the page."""
    return page.locator(".message-assistant").last


def wait_status(page, status: str):
    """Wait until the last reply on the page has this status.

    Not any reply: a wait that an earlier reply (or the new one, before a redraw) met let the
    read that followed find the last reply still writing.
    """
    expect(last_reply(page)).to_have_attribute("data-status", status, timeout=WAIT_MS)
