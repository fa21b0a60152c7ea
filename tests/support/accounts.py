"""Signing a test client in through the real sign-in form, and reading CSRF tokens from pages."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

CSRF_INPUT = re.compile(r'name="csrf_token" type="hidden" value="([^"]+)"')
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


def csrf_token_from(html: str) -> str:
    """Return the CSRF token of a page (its form field or its meta tag)."""
    match = CSRF_INPUT.search(html) or CSRF_META.search(html)
    if match is None:
        raise AssertionError("The page carries no CSRF token.")
    return match.group(1)


def sign_in(client: FlaskClient, name: str, password: str):
    """Post the sign-in form as a browser would (with its CSRF token); return the response."""
    page = client.get("/sign-in")
    token = csrf_token_from(page.get_data(as_text=True))
    return client.post("/sign-in", data={"name": name, "password": password, "csrf_token": token})
