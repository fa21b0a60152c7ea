"""Usage counts: what each user spent on each UTC day, one row per counted thing, added to in place.

A row is (user, day, metric, detail) → amount: ``turns`` by outcome, ``inputTokens`` and
``outputTokens`` by model, ``estimatedTokens`` by model (the part of those two that Lookout
estimated from characters because the model's server reported no usage), ``reasoningTokens``
by model (the part of ``outputTokens`` the model spent reasoning), ``searches`` by the
engine that answered, ``pagesFetched`` and ``fetchedBytes``, ``toolErrors`` by tool,
``uploads`` and ``uploadBytes``. One narrow table rather than a column per metric lets a new
kind of count need no migration, and lets every count be added by the same one-statement
upsert.

``add_usage`` is the one write. It is an ``INSERT … ON CONFLICT DO UPDATE SET amount = amount +
excluded.amount`` (SQLite and PostgreSQL alike): the database adds, so two processes counting at
the same moment never lose a count, as a read-then-write would. It joins the caller's
transaction, so a count is stored with the thing it counts (a turn's ending, a tool call's
outcome, an upload), once.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from sqlalchemy import BigInteger, Date, ForeignKey, String
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from core.extensions import db
from core.models.base import ID_LENGTH, utcnow

METRICS = (
    "turns",
    "inputTokens",
    "outputTokens",
    "estimatedTokens",
    "reasoningTokens",
    "searches",
    "pagesFetched",
    "fetchedBytes",
    "toolErrors",
    "uploads",
    "uploadBytes",
)
DETAIL_LENGTH = 300
_UPSERTS: dict[str, Any] = {}


class UsageCount(db.Model):
    """How much of one metric (with its detail: an outcome, model, engine or tool) a user
    spent on one UTC day."""

    __tablename__ = "usage_counts"

    user_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(Date, primary_key=True, index=True)
    metric: Mapped[str] = mapped_column(String(40), primary_key=True)
    detail: Mapped[str] = mapped_column(String(DETAIL_LENGTH), primary_key=True, default="")
    amount: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)


def today() -> date:
    """Return today's date in UTC, the day usage is counted on.

    Every reader of "today" for usage calls it through this module (``usage_counts.today()``),
    so a test can freeze the day in one place and never see it change mid-test.
    """
    return utcnow().date()


def add_usage(
    user_id: str, counts: Iterable[tuple[str, str, int]], day: date | None = None
) -> None:
    """Add ``(metric, detail, amount)`` counts to the user's row for ``day`` (today, UTC), in
    the session's transaction; the caller commits. Zero amounts are skipped."""
    day = day or today()
    merged: dict[tuple[str, str], int] = {}
    for metric, detail, amount in counts:
        if metric not in METRICS:
            raise ValueError(f"Unknown usage metric {metric!r}.")
        if amount:
            key = (metric, (detail or "")[:DETAIL_LENGTH])
            merged[key] = merged.get(key, 0) + int(amount)
    if not merged:
        return
    rows = [
        {"user_id": user_id, "day": day, "metric": m, "detail": d, "amount": a}
        for (m, d), a in sorted(merged.items())  # one order: concurrent upserts never deadlock
    ]
    connection = db.session.connection()
    connection.execute(upsert_statement(connection.dialect.name), rows)


def upsert_statement(dialect: str) -> Any:
    """Return the upsert for ``dialect``, made once: one statement object, whose compiled
    form SQLAlchemy caches (a statement built with its values each time was compiled each
    time, which was most of the cost of counting)."""
    statement = _UPSERTS.get(dialect)
    if statement is None:
        insert = (postgresql if dialect == "postgresql" else sqlite).insert(UsageCount)
        statement = insert.on_conflict_do_update(
            index_elements=["user_id", "day", "metric", "detail"],
            set_={"amount": UsageCount.amount + insert.excluded.amount},
        )
        _UPSERTS[dialect] = statement
    return statement
