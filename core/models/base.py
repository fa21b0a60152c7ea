"""Column helpers shared by every model: string ids and timezone-aware UTC timestamps."""

import uuid
from datetime import UTC, datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import mapped_column

ID_LENGTH = 32


def new_id() -> str:
    """Return a fresh id: a uuid4 in hex."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    """Return the current time in UTC."""
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """Return a stored time as an aware UTC datetime (SQLite gives back naive ones)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def id_column():
    """Return a primary-key column holding a uuid4 hex id."""
    return mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)


def created_column():
    """Return a not-null timestamp column set when the row is inserted."""
    return mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
