"""The usage pages in a real Chromium: the admins' Usage page (table, chart, filter, CSV), the
usage column of the Users page, and a user's own usage and what is left of their limits in
Settings. The day is frozen (``usage_day``) on the server and in the browser alike, so none of
it sees the day or the month end mid-test."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest

from core.extensions import db
from core.models.usage import add_usage
from tests.support.pages import sign_in_page

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


@pytest.fixture
def people(app, make_user, usage_day, page):
    """An admin, and alice and bob with usage today and yesterday (bob: yesterday only); the
    page's clock reads noon of the frozen day, as the server's does."""
    page.clock.set_fixed_time(datetime.combine(usage_day, time(12), UTC))
    yesterday = usage_day - timedelta(days=1)
    root, alice, bob = make_user("root", admin=True), make_user("alice"), make_user("bob")
    with app.app_context():
        add_usage(
            alice.id,
            [
                ("turns", "completed", 4),
                ("turns", "failed", 1),
                ("inputTokens", "fake/m", 1200),
                ("outputTokens", "fake/m", 300),
                ("searches", "engine-a", 6),
                ("pagesFetched", "", 3),
                ("fetchedBytes", "", 1_500_000),
            ],
        )
        add_usage(alice.id, [("turns", "completed", 2)], day=yesterday)
        add_usage(
            bob.id,
            [("turns", "completed", 1), ("uploads", "", 1), ("uploadBytes", "", 2048)],
            day=yesterday,
        )
        db.session.commit()
    return root, alice, bob


def watch_console(page) -> list[str]:
    """Collect the page's console errors (a CSP refusal is one)."""
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    return errors


def test_an_admin_reads_usage_per_user_filters_it_and_downloads_the_csv(page, live_server, people):
    root, alice, _ = people
    errors = watch_console(page)
    sign_in_page(page, live_server.url, root, "/admin/")
    page.get_by_role("link", name="Usage", exact=True).click()
    page.wait_for_url("**/admin/usage")
    table = page.locator("#usage-users")
    alice_row = table.locator('tr[data-user="alice"] td')
    assert alice_row.all_inner_texts() == [
        "7", "1", "1,200", "300", "6", "3", "1.5 MB", "0", "0", "0 B",
    ]  # fmt: skip
    assert table.locator('tr[data-user="bob"] td').nth(9).inner_text() == "2.0 kB"
    assert table.locator("tfoot td").first.inner_text() == "8"
    chart = page.get_by_role("img", name="Turns per day")
    assert chart.locator("rect.bar").count() == 2  # yesterday and today
    assert page.locator("#usage-searchesByEngine").inner_text().count("engine-a") == 1
    page.screenshot(path="/tmp/usage-page.png", full_page=True)

    # Only alice, with the chart of her searches.
    page.get_by_label("User", exact=True).select_option(label="alice")
    page.get_by_label("Chart").select_option(label="Searches")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**user=*")
    assert page.locator("#usage-users tbody tr").count() == 1
    bars = page.get_by_role("img", name="Searches per day").locator("rect.bar")
    assert bars.count() == 1
    assert bars.locator("title").text_content().endswith(": 6 searches")

    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV").click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "day,user_id,user,metric,detail,amount"
    assert all(f",{alice.id},alice," in line for line in lines[1:]) and len(lines) == 1 + 8
    assert errors == []


def test_the_users_page_shows_each_accounts_usage_this_month_linking_to_its_details(
    page, live_server, people
):
    root, _, _ = people
    sign_in_page(page, live_server.url, root, "/admin/users", ready="#users[data-ready]")
    cell = page.locator('#users tr[data-name="alice"] td.usage-month')
    assert cell.inner_text() == "7 turns · 1,500 tokens · 6 searches"
    cell.get_by_role("link").click()  # the details: the Usage page, for alice, this month
    page.wait_for_url("**/admin/usage?user=*")
    assert page.locator("#usage-users tbody tr").all_inner_texts()[0].startswith("alice")
    assert page.get_by_label("From").input_value() == "2026-11-01"


def test_a_user_sees_their_own_usage_today_and_this_month_and_their_limits_in_settings(
    page, live_server, people
):
    _, alice, _ = people
    errors = watch_console(page)
    sign_in_page(page, live_server.url, alice, "/settings")
    section = page.get_by_role("region", name="Your usage")
    rows = {
        row.locator("th").inner_text(): row.locator("td").all_inner_texts()
        for row in section.locator("tbody tr").all()
    }
    assert rows["Answers (turns)"] == ["5", "7"]
    assert rows["Web searches"] == ["6", "6"]
    assert rows["Pages fetched"] == ["3 (1.5 MB)", "3 (1.5 MB)"]
    assert rows["Uploads"] == ["0 (0 B)", "0 (0 B)"]  # bob's upload is not hers
    limits = {
        row.locator("th").inner_text(): row.locator("td").all_inner_texts()
        for row in page.locator("#usage-limits tbody tr").all()
    }
    assert limits["Web searches per day"] == ["0", "500", "500", "00:00 UTC"]
    assert limits["Megabytes fetched per day"] == ["0 B", "500.0 MB", "500.0 MB", "00:00 UTC"]
    assert limits["Answers running at once"] == ["0", "3", "3", "—"]
    page.screenshot(path="/tmp/usage-settings.png", full_page=True)
    assert errors == []
