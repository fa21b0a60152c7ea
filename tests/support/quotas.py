"""Quotas in tests: a user's daily quotas kept in memory, for tool tests that need them counted
and refused, and a window of the host's Redis counts held open, for turn tests.

The host counts a window limit in a Redis key whose expiry is the window's end
(``core.quotas``), on Redis's clock, in whichever process runs the turn. A test that counts
and then checks cannot freeze that clock; it opens the window itself instead (``hold_window``),
to end far enough away that the hour or the day cannot change while it counts. A provider's
daily cap is counted under the day's name, which cannot be held: its tests wait clear of
midnight (``wait_clear_of_midnight``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import redis

from tools.api import Quotas, QuotaUsed

DAY_SECONDS = 86400


class DayQuotas(Quotas):
    """Counts each quota as the host does in Redis (take, check, add), without its window."""

    def __init__(self, allowed: dict[str, int]) -> None:
        self.allowed = dict(allowed)
        self.used = dict.fromkeys(allowed, 0)

    def take(self, name: str, amount: int = 1) -> None:
        """Count ``amount`` unless that passes the quota; QuotaUsed otherwise."""
        self._refuse_past(name, amount)
        self.used[name] += amount

    def check(self, name: str) -> None:
        """QuotaUsed when nothing is left of the quota."""
        self._refuse_past(name, 1)

    def add(self, name: str, amount: int) -> None:
        """Count what was spent, whatever it passes."""
        self.used[name] += amount

    def _refuse_past(self, name: str, amount: int) -> None:
        if self.used[name] + amount > self.allowed[name]:
            raise QuotaUsed(f"The {name} quota is used up.")


def hold_window(client: redis.Redis, counter: str, window_seconds: int) -> datetime:
    """Open the window count at the Redis key ``counter`` (empty) to end at the first end of its
    window (``core.quotas.WINDOW_SECONDS``, UTC) at least a tenth of a window away; return
    that end.

    The count ends on a window's boundary as ever, so the sentences still say the hour it frees
    at; only the boundary a test would straddle is skipped.
    """
    now = datetime.now(UTC).timestamp()
    end = (now // window_seconds + 1) * window_seconds
    if end - now < window_seconds / 10:
        end += window_seconds
    client.set(counter, 0, pxat=int(end * 1000))
    return datetime.fromtimestamp(end, UTC)


def wait_clear_of_midnight(client: redis.Redis, seconds: float = 30) -> None:
    """Return once Redis's clock is at least ``seconds`` before 00:00 UTC, waiting past it when
    it is closer.

    A provider's daily cap (``tools.rates``) is counted under the day Redis's clock names, which
    no test can hold open: a test of the cap that takes less than ``seconds`` waits instead.
    """
    now, micros = client.time()
    left = DAY_SECONDS - (now % DAY_SECONDS) - micros / 1_000_000
    if left < seconds:
        time.sleep(left + 1)
