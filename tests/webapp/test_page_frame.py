"""What every page shares, in Chromium: the icon in the tab and a header that fits a phone."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import Provider
from tests.support.chat_page import sign_in

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def test_every_page_has_an_icon_and_asks_for_nothing_missing(page, live_server, make_user):
    """Regression: every page asked for /favicon.ico and got a 404."""
    missing = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    sign_in(page, live_server.url, make_user("root", admin=True))
    for path in (
        "/settings",
        "/admin/",
        "/admin/users",
        "/admin/usage",
        "/admin/health",
        "/docs/api",
    ):
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert (
        page.request.get(live_server.url + icon).headers["content-type"].startswith("image/svg+xml")
    )
    assert missing == []


def test_the_header_fits_a_phone_without_its_links_running_together(
    browser, live_server, make_user, tmp_path
):
    """Regression: on a phone the header's links ran into each other."""
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    try:
        sign_in(page, live_server.url, make_user("a-rather-long-name", admin=True))
        boxes = [
            page.locator(selector).bounding_box()
            for selector in (
                ".brand",
                "nav >> text=Chat",
                "nav >> text=Settings",
                "nav >> text=API tokens",
                "nav >> text=Admin",
                ".theme-picker",
                "nav >> text=Sign out",
            )
        ]
        page.screenshot(path=str(tmp_path / "header-phone.png"))
        for box in boxes:
            assert box["x"] >= 0 and box["x"] + box["width"] <= 360
            assert box["height"] < 40  # one line each: no label broken over two
        for i, one in enumerate(boxes):
            for other in boxes[i + 1 :]:
                apart_x = (
                    one["x"] + one["width"] <= other["x"] or other["x"] + other["width"] <= one["x"]
                )
                apart_y = (
                    one["y"] + one["height"] <= other["y"]
                    or other["y"] + other["height"] <= one["y"]
                )
                assert apart_x or apart_y, "two header items overlap"
        gaps = [
            b["x"] - (a["x"] + a["width"])
            for a, b in zip(boxes[1:], boxes[2:], strict=False)
            if a["y"] == b["y"]
        ]
        assert all(gap >= 8 for gap in gaps)
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        context.close()


def test_every_page_fits_a_phone_its_wide_tables_scrolling_in_their_cards(
    browser, app, live_server, make_user, tmp_path
):
    """Regression: on a phone the Users table, the limits in Settings, a provider's base URL
    and the API documentation's tables widened the page past the screen."""
    make_user("someone-with-a-long-name")
    with app.app_context():
        db.session.add(
            Provider(
                name="local",
                base_url="http://model-server.internal.example:11434/v1",
                models=[{"name": "a-model", "tools": True}],
            )
        )
        db.session.commit()
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    try:
        sign_in(page, live_server.url, make_user("root", admin=True))
        wide = {}
        for path, ready in (
            ("/settings", "#usage-limits"),
            ("/admin/users", ".users-table"),
            ("/admin/providers", ".provider-facts"),
            ("/docs/api", ".api-answers"),
        ):
            page.goto(live_server.url + path)
            page.locator(ready).first.wait_for()
            page.screenshot(path=str(tmp_path / f"phone{path.replace('/', '-')}.png"))
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 360:
                wide[path] = width
        assert wide == {}
    finally:
        context.close()
