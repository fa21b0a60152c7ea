"""The admins' Usage page: who spent what, per user and in total, with a chart of 30 days.

Rendered on the server from ``webapp/usage/report.py`` (the API's source too), so it works
without a script; the filter is a GET form whose values the CSV and JSON links repeat.
"""

from __future__ import annotations

from datetime import date, timedelta

from flask import Blueprint, render_template, request, url_for

from core.extensions import db
from core.models import User
from core.models import usage as usage_counts
from webapp.auth.guards import admin_required
from webapp.usage.chart import daily_chart
from webapp.usage.display import size
from webapp.usage.report import (
    DEFAULT_DAYS,
    UsageQuery,
    UsageQueryError,
    make_report,
    read_query,
)

bp = Blueprint("admin_usage", __name__, url_prefix="/admin/usage")

# What the chart can show: its name in the form, the words for it, and its value in a summary.
CHARTS = {
    "turns": ("turns", lambda usage: usage["turns"]),
    "tokens": ("tokens", lambda usage: usage["inputTokens"] + usage["outputTokens"]),
    "searches": ("searches", lambda usage: usage["searches"]),
    "pages": ("pages fetched", lambda usage: usage["pagesFetched"]),
    "toolErrors": ("tool errors", lambda usage: usage["toolErrors"]),
    "uploads": ("uploads", lambda usage: usage["uploads"]),
}


@bp.get("", endpoint="index")
@admin_required
def show_usage():
    """Show the period's usage per user and in total, and a chart (admins only)."""
    users = db.session.scalars(db.select(User).order_by(User.name)).all()
    chart = request.args.get("chart", "turns")
    if chart not in CHARTS:
        chart = "turns"
    try:
        query = read_query(request.args)
    except UsageQueryError as error:
        return render_template(
            "admin/usage.html", error=error.message, users=users, args=request.args,
            charts=CHARTS, chart=chart, report=None, figure=None, size=size,
        ), 400  # fmt: skip
    report = make_report(query)
    figure = make_figure(query, chart)
    links = {k: v for k, v in request.args.items() if k in ("from", "to", "user") and v}
    return render_template(
        "admin/usage.html",
        error=None,
        users=users,
        args=request.args,
        charts=CHARTS,
        chart=chart,
        report=report,
        figure=figure,
        size=size,
        csv_url=url_for("api_usage.csv", **links),
        json_url=url_for("api_usage.report", **links),
    )


def make_figure(query: UsageQuery, chart: str):
    """Return the chart of the 30 days that end with the period, for its user or everyone."""
    end = min(query.end, usage_counts.today())
    days = UsageQuery(end - timedelta(days=DEFAULT_DAYS - 1), end, query.user)
    words, value = CHARTS[chart]
    daily = [(date.fromisoformat(d["day"]), value(d["usage"])) for d in make_report(days)["days"]]
    return daily_chart(daily, words)
