"""Usage in words for the pages: byte sizes as people read them, and the lines of Settings'
usage and limits tables."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.limits import get_limit


def size(amount: int) -> str:
    """Return a byte count as people read it (kB, MB, GB; powers of 1000)."""
    for unit, name in ((1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB")):
        if amount >= unit:
            return f"{amount / unit:.1f} {name}"
    return f"{amount} B"


def usage_lines(*summaries: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Return one (label, [value in each summary]) line per thing a user spends."""

    def each(describe) -> list[str]:
        return [describe(summary) for summary in summaries]

    return [
        ("Answers (turns)", each(lambda u: f"{u['turns']:,}")),
        (
            "Model tokens in / out",
            each(lambda u: f"{u['inputTokens']:,} / {u['outputTokens']:,}"),
        ),
        ("Web searches", each(lambda u: f"{u['searches']:,}")),
        ("Pages fetched", each(lambda u: f"{u['pagesFetched']:,} ({size(u['fetchedBytes'])})")),
        ("Tool errors", each(lambda u: f"{u['toolErrors']:,}")),
        ("Uploads", each(lambda u: f"{u['uploads']:,} ({size(u['uploadBytes'])})")),
    ]


def limit_lines(limits: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Return the user's limits (``core.quotas.remaining``) in words: label, used, allowed,
    left and when the count starts again."""
    lines = []
    for limit in limits:
        in_bytes = get_limit(limit["limit"]).unit != 1
        amount = size if in_bytes else (lambda n: f"{n:,}")
        resets = limit["resetsAt"]
        lines.append(
            {
                "limit": limit["limit"],
                "label": limit["label"],
                "used": amount(limit["used"]),
                "allowed": amount(limit["allowed"]),
                "left": amount(max(0, limit["allowed"] - limit["used"])),
                "resets": (f"{datetime.fromisoformat(resets):%H:%M} UTC" if resets else "—"),
            }
        )
    return lines
