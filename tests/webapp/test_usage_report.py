"""The admins' usage: /api/admin/usage (JSON), its CSV and the Usage page, over usage rows
stored as the app stores them; admins only."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta

import pytest

from core.extensions import db
from core.models.usage import add_usage


@pytest.fixture
def recorded(app, make_user, usage_day):
    """Two users' usage on two days of a period in the past, and one day of today (frozen)."""
    alice, bob = make_user("alice"), make_user("=bob")
    with app.app_context():
        add_usage(
            alice.id,
            [
                ("turns", "completed", 2),
                ("turns", "failed", 1),
                ("inputTokens", "fake/m", 300),
                ("outputTokens", "fake/m", 40),
                ("searches", "engine-a", 3),
                ("pagesFetched", "", 2),
                ("fetchedBytes", "", 2_500_000),
            ],
            day=date(2026, 10, 3),
        )
        add_usage(
            bob.id,
            [("turns", "completed", 1), ("toolErrors", "web_fetch", 1), ("uploads", "", 1)],
            day=date(2026, 10, 5),
        )
        add_usage(alice.id, [("turns", "completed", 5)])  # today
        db.session.commit()
    return alice, bob


def test_the_json_report_has_each_user_the_totals_and_every_day_of_the_period(
    signed_in_client, recorded
):
    admin = signed_in_client(admin=True)
    response = admin.get("/api/admin/usage?from=2026-10-01&to=2026-10-07")
    assert response.status_code == 200, response.get_json()
    report = response.get_json()
    assert (report["from"], report["to"], report["user"]) == ("2026-10-01", "2026-10-07", None)
    assert [u["name"] for u in report["users"]] == ["=bob", "alice"]
    alice = report["users"][1]["usage"]
    assert alice["turns"] == 3 and alice["turnsByOutcome"] == {"completed": 2, "failed": 1}
    assert alice["inputTokensByModel"] == {"fake/m": 300} and alice["outputTokens"] == 40
    assert alice["searchesByEngine"] == {"engine-a": 3} and alice["fetchedBytes"] == 2_500_000
    totals = report["totals"]
    assert (totals["turns"], totals["toolErrors"], totals["uploads"]) == (4, 1, 1)
    assert [d["day"] for d in report["days"]] == [f"2026-10-0{n}" for n in range(1, 8)]
    assert [d["usage"]["turns"] for d in report["days"]] == [0, 0, 3, 0, 1, 0, 0]


def test_the_report_of_one_user_by_name_or_id_leaves_the_others_out(signed_in_client, recorded):
    alice, _ = recorded
    admin = signed_in_client(admin=True)
    for who in ("alice", alice.id):
        report = admin.get(f"/api/admin/usage?from=2026-10-01&to=2026-10-31&user={who}").get_json()
        assert report["user"] == alice.id
        assert [u["name"] for u in report["users"]] == ["alice"]
        assert report["totals"]["turns"] == 3


def test_by_default_the_report_covers_the_last_30_days_up_to_today(
    signed_in_client, recorded, usage_day
):
    report = signed_in_client(admin=True).get("/api/admin/usage").get_json()
    assert report["to"] == usage_day.isoformat() == "2026-11-18"
    assert report["from"] == (usage_day - timedelta(days=29)).isoformat()
    assert len(report["days"]) == 30 and report["totals"]["turns"] == 5


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("from=yesterday", "from", "yesterday is not a date. Write from as YYYY-MM-DD"),
        ("from=2026-10-09&to=2026-10-01", "from", "The period starts after it ends."),
        ("user=nobody", "user", "There is no user nobody. Give a user's name or id"),
        ("from=2020-01-01&to=2026-01-01", "from", "Ask for at most 366 days at once"),
    ],
)
def test_a_filter_that_cannot_be_read_is_refused_with_what_to_write(
    signed_in_client, query, field, message
):
    response = signed_in_client(admin=True).get(f"/api/admin/usage?{query}")
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert message in error["message"] and field in error["fields"]


def test_the_csv_has_one_line_per_user_day_metric_and_detail(signed_in_client, recorded):
    alice, bob = recorded
    response = signed_in_client(admin=True).get(
        "/api/admin/usage.csv?from=2026-10-01&to=2026-10-07"
    )
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert (
        'attachment; filename="lookout-usage-2026-10-01-to-2026-10-07.csv"'
        == response.headers["Content-Disposition"]
    )
    lines = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert lines[0] == ["day", "user_id", "user", "metric", "detail", "amount"]
    assert ["2026-10-03", alice.id, "alice", "searches", "engine-a", "3"] in lines
    # A name starting with "=" stays text in a spreadsheet rather than becoming a formula.
    assert ["2026-10-05", bob.id, "'=bob", "toolErrors", "web_fetch", "1"] in lines
    assert len(lines) == 1 + 7 + 3


def test_the_usage_page_shows_each_user_and_the_totals(signed_in_client, recorded):
    page = signed_in_client(admin=True).get("/admin/usage?from=2026-10-01&to=2026-10-07")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert '<tr data-user="alice">' in text and '<tr data-user="=bob">' in text
    assert "2.5 MB" in text  # alice's fetched bytes
    assert 'class="usage-chart"' in text
    assert "/api/admin/usage.csv?from=2026-10-01&amp;to=2026-10-07" in text


def test_a_usage_page_filter_that_cannot_be_read_says_so(signed_in_client):
    page = signed_in_client(admin=True).get("/admin/usage?to=soon")
    assert page.status_code == 400
    assert "soon is not a date. Write to as YYYY-MM-DD (a UTC day)." in page.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/api/admin/usage", "/api/admin/usage.csv", "/admin/usage"])
def test_usage_is_for_admins_only(signed_in_client, recorded, path):
    assert signed_in_client("someone").get(path).status_code == 403


def test_the_usage_page_says_which_tokens_were_estimated(app, signed_in_client, make_user):
    """Issue 30: a server that reports no usage left the Usage page at 0 tokens; its tokens
    are now estimated, and the page says how many are estimates and of which model."""
    carol = make_user("carol")
    with app.app_context():
        add_usage(
            carol.id,
            [
                ("inputTokens", "llama/gemma", 900),
                ("outputTokens", "llama/gemma", 100),
                ("estimatedTokens", "llama/gemma", 1000),
                ("inputTokens", "openai/gpt", 50),
                ("outputTokens", "openai/gpt", 5),
            ],
            day=date(2026, 10, 4),
        )
        db.session.commit()
    admin = signed_in_client(admin=True)
    text = admin.get("/admin/usage?from=2026-10-01&to=2026-10-07").get_data(as_text=True)
    assert (
        '<p class="muted" id="usage-estimated">1,000 of these tokens are estimates: the server '
        "of 1 model (llama/gemma) reported no usage, so Lookout counted about one token for "
        "every four characters sent and received."
    ) in text
    assert "<td>1,000</td></tr>" in text and "<td>5</td><td>—</td></tr>" in text
    report = admin.get("/api/admin/usage?from=2026-10-01&to=2026-10-07").get_json()
    assert report["totals"]["estimatedTokensByModel"] == {"llama/gemma": 1000}
