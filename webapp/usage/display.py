"""Usage in words for the pages: byte sizes as people read them, and the lines of Settings'
usage table."""

from __future__ import annotations

from typing import Any


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
