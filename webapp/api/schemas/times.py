"""Times in answers: ISO 8601 in UTC, always with their offset.

SQLite gives stored times back without a zone and PostgreSQL with one, so ``isoformat()``
answered ``2026-11-30T21:28:24`` on one and ``...+00:00`` on the other; a browser reads the first
as its own local time. Every answer's time goes through ``UtcTime``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from marshmallow import fields

from core.models.base import aware


class UtcTime(fields.DateTime):
    """A stored time, dumped as ISO 8601 with its UTC offset (an OpenAPI ``date-time``)."""

    def _serialize(self, value: datetime | None, attr: Any, obj: Any, **kwargs: Any) -> str | None:
        return None if value is None else aware(value).isoformat()
