"""Usage as admins read it: a period's counts per user, per day, in total, and as rows.

A summary (``usage``, ``totals``) holds each metric's count and the breakdowns of some (by
model, engine, outcome, tool), as webapp/usage/report.py makes it.
"""

from __future__ import annotations

from marshmallow import Schema, fields

SUMMARY = {"description": "Each metric's count, and breakdowns by model, engine, outcome, tool."}
QUERY = (
    {
        "name": "from",
        "in": "query",
        "required": False,
        "allowEmptyValue": True,
        "schema": {"type": "string", "format": "date"},
        "description": "First day (UTC, YYYY-MM-DD); by default 30 days ago.",
    },
    {
        "name": "to",
        "in": "query",
        "required": False,
        "allowEmptyValue": True,
        "schema": {"type": "string", "format": "date"},
        "description": "Last day (UTC, YYYY-MM-DD); by default today.",
    },
    {
        "name": "user",
        "in": "query",
        "required": False,
        "allowEmptyValue": True,
        "schema": {"type": "string"},
        "description": "A user's name or id; by default everyone.",
    },
)


class UserUsageSchema(Schema):
    """One user's usage in the period."""

    id = fields.String()
    name = fields.String()
    usage = fields.Dict(metadata=SUMMARY)


class DayUsageSchema(Schema):
    """One day's usage, everyone's or the chosen user's."""

    day = fields.String(metadata={"format": "date"})
    usage = fields.Dict(metadata=SUMMARY)


class UsageRowSchema(Schema):
    """One stored count: a user's metric (and its detail) on a day."""

    day = fields.String(metadata={"format": "date"})
    userId = fields.String()
    userName = fields.String()
    metric = fields.String()
    detail = fields.String()
    amount = fields.Integer()


class UsageReportSchema(Schema):
    """A period's usage per user, per day and in total, with its rows."""

    from_ = fields.String(data_key="from", attribute="from", metadata={"format": "date"})
    to = fields.String(metadata={"format": "date"})
    user = fields.String(allow_none=True, metadata={"description": "The chosen user's id."})
    users = fields.List(fields.Nested(UserUsageSchema))
    totals = fields.Dict(metadata=SUMMARY)
    days = fields.List(fields.Nested(DayUsageSchema))
    rows = fields.List(fields.Nested(UsageRowSchema))
