"""Fixtures for page tests: one system Chromium per session, driven by Playwright."""

from __future__ import annotations

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser(chromium_executable):
    """The system Chromium under Playwright (never a downloaded browser), closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_executable, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh page in its own browser context (own cookies), closed after the test."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    yield context.new_page()
    context.close()
