"""Summaries of the usage counts for a period: per user, per day, in total, and as flat rows.

A summary is one JSON-ready dict of every metric's total, with the breakdown of the metrics
that have one (``turnsByOutcome``, ``inputTokensByModel``, ``searchesByEngine``, …). The API,
the CSV, the Usage page, Settings and the Users page all read these, so they never disagree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from core.extensions import db
from core.models import UsageCount, User
from core.models import usage as usage_counts
from core.models.usage import METRICS

# The metrics whose detail is worth a breakdown, and the summary key it goes under.
BREAKDOWNS = {
    "turns": "turnsByOutcome",
    "inputTokens": "inputTokensByModel",
    "outputTokens": "outputTokensByModel",
    "estimatedTokens": "estimatedTokensByModel",
    "reasoningTokens": "reasoningTokensByModel",
    "searches": "searchesByEngine",
    "toolErrors": "toolErrorsByTool",
}
DEFAULT_DAYS = 30
LONGEST_DAYS = 366


class UsageQueryError(Exception):
    """A period or user filter that cannot be read; ``fields`` says which, for the API."""

    def __init__(self, message: str, fields: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


@dataclass(frozen=True)
class UsageQuery:
    """A period of UTC days (both ends included) and, optionally, one user."""

    start: date
    end: date
    user: User | None = None

    @property
    def days(self) -> list[date]:
        """Return every day of the period, in order."""
        return [self.start + timedelta(days=n) for n in range((self.end - self.start).days + 1)]


def read_query(args: Mapping[str, str]) -> UsageQuery:
    """Return the query ``from``, ``to`` (YYYY-MM-DD, UTC) and ``user`` (an id or a name) ask
    for: by default the 30 days up to today, everyone; raise UsageQueryError naming the field."""
    end = _read_day(args, "to") or usage_counts.today()
    start = _read_day(args, "from") or end - timedelta(days=DEFAULT_DAYS - 1)
    if start > end:
        raise UsageQueryError(
            "The period starts after it ends. Give a from date on or before the to date.",
            {"from": ["Must be on or before to."]},
        )
    if (end - start).days >= LONGEST_DAYS:
        raise UsageQueryError(
            f"Ask for at most {LONGEST_DAYS} days at once; download longer periods in parts.",
            {"from": [f"At most {LONGEST_DAYS} days before to."]},
        )
    user = None
    wanted = (args.get("user") or "").strip()
    if wanted:
        user = db.session.get(User, wanted) or db.session.scalar(
            db.select(User).filter_by(name=wanted)
        )
        if user is None:
            raise UsageQueryError(
                f"There is no user {wanted}. Give a user's name or id, or leave it out for "
                "everyone.",
                {"user": ["No such user."]},
            )
    return UsageQuery(start, end, user)


def _read_day(args: Mapping[str, str], name: str) -> date | None:
    text = (args.get(name) or "").strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UsageQueryError(
            f"{text} is not a date. Write {name} as YYYY-MM-DD (a UTC day).",
            {name: ["Not a date in the form YYYY-MM-DD."]},
        ) from None


def empty_summary() -> dict[str, Any]:
    """Return a summary with every metric at zero."""
    summary: dict[str, Any] = {metric: 0 for metric in METRICS}
    summary.update({key: {} for key in BREAKDOWNS.values()})
    return summary


def summarise(counts: Iterable[tuple[str, str, int]]) -> dict[str, Any]:
    """Return the summary of ``(metric, detail, amount)`` counts."""
    summary = empty_summary()
    for metric, detail, amount in counts:
        summary[metric] += amount
        if metric in BREAKDOWNS:
            by = summary[BREAKDOWNS[metric]]
            by[detail] = by.get(detail, 0) + amount
    return summary


def find_counts(query: UsageQuery) -> list[UsageCount]:
    """Return the period's usage rows (of the query's user, if any), by day, user and metric."""
    select = db.select(UsageCount).filter(
        UsageCount.day >= query.start, UsageCount.day <= query.end
    )
    if query.user is not None:
        select = select.filter(UsageCount.user_id == query.user.id)
    order = (UsageCount.day, UsageCount.user_id, UsageCount.metric, UsageCount.detail)
    return list(db.session.scalars(select.order_by(*order)))


def user_names(user_ids: Iterable[str]) -> dict[str, str]:
    """Return the names of the given users by id."""
    ids = set(user_ids)
    if not ids:
        return {}
    return dict(db.session.execute(db.select(User.id, User.name).filter(User.id.in_(ids))).all())


def make_report(query: UsageQuery) -> dict[str, Any]:
    """Return the period's usage: per user (by name), per day and in total, with the rows."""
    rows = find_counts(query)
    names = user_names(row.user_id for row in rows)
    by_user: dict[str, list] = defaultdict(list)
    by_day: dict[date, list] = defaultdict(list)
    for row in rows:
        by_user[row.user_id].append((row.metric, row.detail, row.amount))
        by_day[row.day].append((row.metric, row.detail, row.amount))
    users = [
        {"id": user_id, "name": names.get(user_id, user_id), "usage": summarise(counts)}
        for user_id, counts in by_user.items()
    ]
    users.sort(key=lambda user: user["name"].lower())
    return {
        "from": query.start.isoformat(),
        "to": query.end.isoformat(),
        "user": query.user.id if query.user else None,
        "users": users,
        "totals": summarise((r.metric, r.detail, r.amount) for r in rows),
        "days": [
            {"day": day.isoformat(), "usage": summarise(by_day.get(day, []))} for day in query.days
        ],
        "rows": [
            {
                "day": row.day.isoformat(),
                "userId": row.user_id,
                "userName": names.get(row.user_id, row.user_id),
                "metric": row.metric,
                "detail": row.detail,
                "amount": row.amount,
            }
            for row in rows
        ],
    }


def month_start(day: date) -> date:
    """Return the first day of ``day``'s month."""
    return day.replace(day=1)


def own_usage(user: User) -> dict[str, Any]:
    """Return a user's summaries for today and this month (UTC), and the month's first day."""
    now = usage_counts.today()
    month = make_report(UsageQuery(month_start(now), now, user))
    today_usage = month["days"][-1]["usage"]
    return {"today": today_usage, "month": month["totals"], "monthStart": month["from"]}


def monthly_usage(user_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Return this month's summary (UTC) of each of the given users (zero for none)."""
    now = usage_counts.today()
    ids = list(user_ids)
    counts: dict[str, list] = {user_id: [] for user_id in ids}
    rows = db.session.execute(
        db.select(UsageCount.user_id, UsageCount.metric, UsageCount.detail, UsageCount.amount)
        .filter(UsageCount.day >= month_start(now), UsageCount.day <= now)
        .filter(UsageCount.user_id.in_(ids))
    )
    for user_id, metric, detail, amount in rows:
        counts[user_id].append((metric, detail, amount))
    return {user_id: summarise(found) for user_id, found in counts.items()}
