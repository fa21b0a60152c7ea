"""Paces calls to an engine: one shared bucket per engine and credentials, and its sentences.

Every worker process books its searches in the same bucket (``ToolContext.rates``), so the
engine is never asked faster than its rate, however many turns search at once. The bucket is
named by the engine and a hash of the key and base URL: a key never appears in a Redis key name.
"""

from __future__ import annotations

import hashlib
import math

from tools.api import RateLimit, RateLimited, Rates, Signal
from tools.web_search.engine import SearchEngine
from tools.web_search.search import EngineUnavailable


def bucket_name(engine: SearchEngine, api_key: str | None, base_url: str | None) -> str:
    """Return the bucket of this engine and these credentials, the secret hashed."""
    credentials = f"{api_key or ''}\0{base_url or ''}".encode()
    return f"web_search:{engine.id}:{hashlib.sha256(credentials).hexdigest()[:32]}"


def wait_for_engine(
    engine: SearchEngine,
    limit: RateLimit,
    bucket: str,
    rates: Rates,
    signal: Signal,
    reserve: float,
) -> None:
    """Return when the engine may be asked, ``reserve`` seconds of the deadline still left.

    Raises ``EngineUnavailable`` (rate-limited) with the sentence the model reads when no slot
    comes in time or the day's cap is used, and ``Cancelled`` when the turn is cancelled.
    """
    try:
        rates.take(bucket, limit, signal, reserve=reserve)
    except RateLimited as exc:
        if exc.daily:
            message = (
                f"The search engine {engine.name} allows {searches(limit.per_day or 0)} a day "
                "and today's are used up; the count starts again at 00:00 UTC."
            )
        else:
            message = (
                f"The search engine {engine.name} allows {pace(limit.per_second)} and is busy; "
                f"try again {later(exc.retry_after)}."
            )
        raise EngineUnavailable(message, "rate-limited") from None


def later(seconds: float) -> str:
    """Return when to try again in words: "in a moment" (under 10 s), "in 45 seconds", "in 3
    minutes"."""
    if seconds < 10:
        return "in a moment"
    if seconds < 120:
        return f"in {math.ceil(seconds)} seconds"
    return f"in {math.ceil(seconds / 60)} minutes"


def pace(per_second: float) -> str:
    """Return a rate in words: "1 search a second", "2.5 searches a second", "1 search every 2
    seconds"."""
    if per_second >= 1:
        return f"{searches(per_second)} a second"
    return f"1 search every {round(1 / per_second, 1):g} seconds"


def searches(count: float) -> str:
    """Return "1 search" or "N searches"."""
    shown = f"{round(count, 2):g}"
    return f"{shown} search{'' if shown == '1' else 'es'}"
