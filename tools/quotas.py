"""Quotas a user's tool calls draw on, shared by every worker process: ``ToolContext.quotas``.

A host counts them where every process sees the same number (Lookout: Redis, through
``core.quotas.UserQuotas``); a tool asks before it spends, and what it spent is counted when it
meters it (``tools.usage.QUOTA_OF``: bytes read count against ``FETCH_BYTES``). ``Quotas``
itself is what a ToolContext built outside a host gets: nothing is counted, so nothing is
refused. The quotas a tool may name are ``SEARCHES`` (one per search made on the admin's key)
and ``FETCH_BYTES`` (decoded bytes read).

Errors::

    Exception
    └── QuotaUsed       the user's quota is used up; ``message`` says which and when it resets,
                        for the tool to raise as the ``ToolError`` the model reads
"""

from __future__ import annotations

SEARCHES = "searchesPerDay"
FETCH_BYTES = "fetchBytesPerDay"


class QuotaUsed(Exception):
    """The quota is used up; ``message`` is the sentence the model reads."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Quotas:
    """A user's quotas as a tool sees them; this base counts nothing and refuses nothing."""

    def take(self, name: str, amount: int = 1) -> None:
        """Count ``amount`` against the quota ``name``; raise QuotaUsed when it would pass it."""

    def check(self, name: str) -> None:
        """Raise QuotaUsed when the quota ``name`` has nothing left (counting nothing)."""

    def add(self, name: str, amount: int) -> None:
        """Count ``amount`` already spent against the quota ``name`` (never refuses).

        ``ToolContext.meter`` calls it for what a tool meters; a tool need not.
        """
