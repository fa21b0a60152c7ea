"""The admins' usage API: ``GET /api/admin/usage`` (JSON) and ``GET /api/admin/usage.csv``.

Both take ``from`` and ``to`` (UTC days, YYYY-MM-DD; by default the last 30 days) and ``user``
(a name or an id; by default everyone), read by ``webapp/usage/report.py``, which the Usage
page reads too.
"""

from __future__ import annotations

import csv
import io

from flask import Blueprint, Response, jsonify, request

from webapp.api.operations import operation
from webapp.api.schemas.usage import QUERY, UsageReportSchema
from webapp.auth.guards import admin_required
from webapp.errors import ApiError
from webapp.usage.report import UsageQuery, UsageQueryError, make_report, read_query

bp = Blueprint("api_usage", __name__, url_prefix="/api/admin")
CSV_COLUMNS = ("day", "user_id", "user", "metric", "detail", "amount")


def query_from_request() -> UsageQuery:
    """Return the request's usage query, or answer 400 naming the field."""
    try:
        return read_query(request.args)
    except UsageQueryError as error:
        raise ApiError(error.message, 400, error.fields) from None


@bp.get("/usage", endpoint="report")
@admin_required
@operation(answers={200: UsageReportSchema}, errors=(400,), parameters=QUERY)
def show_usage():
    """Return the period's usage per user, per day and in total, and its rows."""
    return jsonify(UsageReportSchema().dump(make_report(query_from_request())))


@bp.get("/usage.csv", endpoint="csv")
@admin_required
@operation(answers={200: ("text/csv", None)}, errors=(400,), parameters=QUERY)
def download_usage():
    """Return the period's usage rows as a CSV file: one line per user, day, metric and detail."""
    query = query_from_request()
    report = make_report(query)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in report["rows"]:
        writer.writerow(
            [
                row["day"],
                row["userId"],
                safe_cell(row["userName"]),
                row["metric"],
                safe_cell(row["detail"]),
                row["amount"],
            ]
        )
    name = f"lookout-usage-{report['from']}-to-{report['to']}"
    if query.user is not None:
        name += f"-{query.user.id}"
    return Response(
        out.getvalue(),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
    )


def safe_cell(text: str) -> str:
    """Return ``text`` so that a spreadsheet shows it rather than running it as a formula.

    User names and model names are chosen by people; a cell starting with =, +, - or @ would
    be a formula in the spreadsheet an admin opens the file with.
    """
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
