"""What a tool call spent, as the tool reports it: ``ToolContext.meter``.

Only a tool knows what it spent: how many searches and on which engine, whether a page came
from the network or from the turn cache, how many bytes it read. It says so with
``ctx.meter.add(metric, amount, detail)``; the host reads the meter when the call ends and
counts it in the user's usage (``core/models/usage.py``), whatever the call's outcome, since
bytes read before a timeout were read all the same. Outside a host nothing reads it.

A metric that draws on a daily quota (``QUOTA_OF``) is counted against it as it is metered, in
the call's ``ToolContext.quotas``: a tool says what it spent once, and usage and the quota
cannot disagree.
"""

from __future__ import annotations

import threading

from tools.quotas import FETCH_BYTES, Quotas, QuotaUsed

SEARCHES = "searches"  # detail: the id of the engine that answered
PAGES_FETCHED = "pagesFetched"  # a page or file downloaded (not one served from the turn cache)
FETCHED_BYTES = "fetchedBytes"  # bytes read, decoded (as after gzip or deflate)
METRICS = (SEARCHES, PAGES_FETCHED, FETCHED_BYTES)
# The quota each metric draws on. Bytes are known only once read, so they are counted here and
# the next fetch is the one refused. Searches are not here: a search is taken from its quota
# before it is made, and only on the admin's key, while the meter counts every search.
QUOTA_OF = {FETCHED_BYTES: FETCH_BYTES}


class Meter:
    """Collects a tool call's ``(metric, detail, amount)`` counts; safe across threads.

    ``quotas`` are the ones its metrics draw on (``ToolContext`` hands it the call's own).
    """

    def __init__(self, quotas: Quotas | None = None) -> None:
        self.quotas = quotas if quotas is not None else Quotas()
        self._counts: list[tuple[str, str, int]] = []
        self._lock = threading.Lock()

    def add(self, metric: str, amount: int = 1, detail: str = "") -> None:
        """Count ``amount`` of ``metric`` (one of ``METRICS``), and against the quota it draws
        on; raise ValueError for another metric. Never refuses: it was spent already."""
        if metric not in METRICS:
            raise ValueError(f"Unknown usage metric {metric!r}; use one of {', '.join(METRICS)}.")
        with self._lock:
            self._counts.append((metric, detail, int(amount)))
        quota = QUOTA_OF.get(metric)
        if quota is not None:
            try:
                self.quotas.add(quota, int(amount))
            except QuotaUsed:
                pass  # the quota could not be counted (Redis away): its next check says so

    def counts(self) -> list[tuple[str, str, int]]:
        """Return what was counted so far."""
        with self._lock:
            return list(self._counts)
