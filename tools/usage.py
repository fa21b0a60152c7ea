"""What a tool call spent, as the tool reports it: ``ToolContext.meter``.

Only a tool knows what it spent: how many searches and on which engine, whether a page came
from the network or from the turn cache, how many bytes it read. It says so with
``ctx.meter.add(metric, amount, detail)``; the host reads the meter when the call ends and
counts it in the user's usage (``webapp/models/usage.py``), whatever the call's outcome, since
bytes read before a timeout were read all the same. Outside a host nothing reads it.
"""

from __future__ import annotations

import threading

SEARCHES = "searches"  # detail: the id of the engine that answered
PAGES_FETCHED = "pagesFetched"  # a page or file downloaded (not one served from the turn cache)
FETCHED_BYTES = "fetchedBytes"  # bytes read, decoded (as after gzip or deflate)
METRICS = (SEARCHES, PAGES_FETCHED, FETCHED_BYTES)


class Meter:
    """Collects a tool call's ``(metric, detail, amount)`` counts; safe across threads."""

    def __init__(self) -> None:
        self._counts: list[tuple[str, str, int]] = []
        self._lock = threading.Lock()

    def add(self, metric: str, amount: int = 1, detail: str = "") -> None:
        """Count ``amount`` of ``metric`` (one of ``METRICS``); raise ValueError for others."""
        if metric not in METRICS:
            raise ValueError(f"Unknown usage metric {metric!r}; use one of {', '.join(METRICS)}.")
        with self._lock:
            self._counts.append((metric, detail, int(amount)))

    def counts(self) -> list[tuple[str, str, int]]:
        """Return what was counted so far."""
        with self._lock:
            return list(self._counts)
