"""Driving Lookout's pages in the browser: the one way tests sign in through the real form."""

from __future__ import annotations


def sign_in_page(page, base_url: str, user, path: str = "/", ready: str | None = None) -> None:
    """Sign ``user`` (password "password") in through the form, then open ``path``.

    ``ready`` is a CSS selector the page's script marks once it has drawn (e.g.
    ``#chat[data-ready]``); the call waits for it. The chat page that signing in lands on is
    drawn before ``path`` is opened: left at once, its requests went on in the server while
    the test ran, and past its end into the app's teardown.
    """
    page.goto(f"{base_url}/sign-in")
    page.get_by_label("Name").fill(user.name)
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base_url}/")
    if path != "/":
        page.wait_for_selector("#chat[data-ready]")
        page.goto(f"{base_url}{path}")
    if ready is not None:
        page.wait_for_selector(ready)


def key_fields(page) -> list[dict]:
    """Return every input of the page labelled as a key (shown or not): its id, type and
    autocomplete attribute, for checking that no browser offers to save a key as a password."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll("input"))
          .filter((input) => Array.from(input.labels || [])
            .some((label) => /\\bkey\\b/i.test(label.textContent)))
          .map((input) => ({ id: input.id, type: input.type,
                             autocomplete: input.getAttribute("autocomplete") }))"""
    )
