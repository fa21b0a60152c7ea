"""A user's daily quotas kept in memory, for tool tests that need them counted and refused."""

from __future__ import annotations

from tools.api import Quotas, QuotaUsed


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
