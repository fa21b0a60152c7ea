"""The conversation list: date groups (webapp/static/chat_dates.js, in Node) and search by title
(in Chromium)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from core.extensions import db
from core.models import Conversation
from tests.support.chat_page import sign_in
from tests.support.node import run_node

NOW = "2026-11-30T12:00:00Z"


def groups(times: list[str]) -> list[str]:
    return run_node("chat_dates.js", "groupOf", [[when, NOW] for when in times])


def test_conversations_group_by_day_then_by_month():
    assert groups(
        [
            "2026-11-30T09:00:00+00:00",
            "2026-11-29T10:00:00+00:00",
            "2026-11-28T10:00:00+00:00",
            "2026-11-23T10:00:00+00:00",
            "2026-11-22T10:00:00+00:00",
            "2026-10-31T10:00:00+00:00",
            "2026-10-30T10:00:00+00:00",
            "2025-12-01T10:00:00+00:00",
        ]
    ) == [
        "Today",
        "Yesterday",
        "Previous 7 days",
        "Previous 7 days",
        "Previous 30 days",
        "Previous 30 days",
        "October 2026",
        "December 2025",
    ]


def test_a_time_without_a_zone_is_read_as_utc_as_the_api_means_it():
    """SQLite gives times back without their zone; they are UTC, not the browser's local time."""
    # At UTC+14, 11:00 UTC on the 29th is the 30th locally, and NOW is the 1st: yesterday. Read
    # as local time, it would be two days ago.
    [label] = run_node(
        "chat_dates.js", "groupOf", [["2026-11-29T11:00:00", NOW]], time_zone="Pacific/Kiritimati"
    )
    assert label == "Yesterday"


@pytest.mark.chromium
@pytest.mark.integration
def test_the_list_is_grouped_by_date_and_searched_by_title(
    page, chat_app, chat_server, user, tmp_path
):
    person, _chat = user
    now = datetime.now(UTC)
    stored = [
        ("Lighthouse keepers", now - timedelta(minutes=5)),
        ("Café opening hours", now - timedelta(days=1)),
        ("Tide tables", now - timedelta(days=4)),
        ("Lighthouse lenses", now - timedelta(days=20)),
        ("Old notes", datetime(2024, 3, 15, 12, tzinfo=UTC)),
    ]
    with chat_app.app_context():
        for title, when in stored:
            db.session.add(
                Conversation(owner_id=person.id, title=title, created_at=when, updated_at=when)
            )
        db.session.commit()
    sign_in(page, chat_server.url, person)
    sidebar = page.locator("#chat-sidebar")
    expect(sidebar.locator(".conversation-link")).to_have_count(5)
    labels = sidebar.locator(".group-label").all_inner_texts()
    # (Today and Yesterday are pinned in Node above, where the clock is fixed.)
    assert labels[-2:] == ["Previous 30 days", "March 2024"] and len(labels) >= 4
    assert sidebar.locator(".conversation-link").all_inner_texts() == [t for t, _ in stored]
    lenses = sidebar.get_by_role("region", name="Previous 30 days")
    assert lenses.get_by_role("link").all_inner_texts() == ["Lighthouse lenses"]

    page.screenshot(path=str(tmp_path / "sidebar-groups.png"))
    search = page.get_by_label("Search conversations")
    search.fill("lighthouse")
    assert sidebar.locator(".conversation-link").all_inner_texts() == [
        "Lighthouse keepers",
        "Lighthouse lenses",
    ]
    search.fill("cafe HOURS")  # any case, without the accent, words in any order
    assert sidebar.locator(".conversation-link").all_inner_texts() == ["Café opening hours"]
    search.fill("submarine")
    assert sidebar.locator(".conversation-link").count() == 0
    assert page.locator("#sidebar-status").inner_text() == (
        "No conversation title has “submarine” in it."
    )
    page.screenshot(path=str(tmp_path / "sidebar-search.png"))
    search.press("Escape")
    expect(sidebar.locator(".conversation-link")).to_have_count(5)
    assert not page.locator("#sidebar-status").is_visible()
