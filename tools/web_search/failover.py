"""Asks the call's engine, then the admin's fallback engine when the first is rate-limited,
blocked or down, and says which one answered.

Time is shared out of the call's one deadline: with a fallback, the first engine waits for its
slot and answers only while the fallback would still have ``FALLBACK_RESERVE_SECONDS``.

Every engine that fails a search is reported through the plugin API's
``report_search_failure``, with why (``SEARCH_FAILURE_REASONS``), whether or not a fallback then
answered: the host counts them for /metrics by engine, as it does any search plugin's.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.api import QuotaUsed, ToolContext, ToolError, ToolRefused, report_search_failure
from tools.quotas import SEARCHES
from tools.web_search.engine import Search, SearchResult
from tools.web_search.pacing import bucket_name, wait_for_engine
from tools.web_search.resolution import Resolved
from tools.web_search.search import EngineUnavailable, run_search
from tools.web_search.sessions import SearchSession

# A search waits for its engine's slot only while this much of its deadline would be left.
REQUEST_RESERVE_SECONDS = 5.0
# What the first engine leaves of the deadline for the fallback.
FALLBACK_RESERVE_SECONDS = 6.0
# The longest a rate-limited engine's Retry-After keeps searches off it.
MAX_HOLD_SECONDS = 600.0
# How a failure of the fallback follows the first engine's ("…: <its sentence>").
FALLBACK_FAILED = "The fallback engine {name} failed too"


def failure_reason(error: ToolError) -> str:
    """Return why an engine failed, in the words of ``SEARCH_FAILURE_REASONS``:
    ``EngineUnavailable``'s own reason, "refused" for a refused address, else "error"."""
    if isinstance(error, EngineUnavailable):
        return error.reason
    return "refused" if isinstance(error, ToolRefused) else "error"


class QuotaSpent(ToolError):
    """The user's daily searches on the admin's key are used up: theirs to wait out, not a
    failure of the engine."""


class BothFailed(ToolError):
    """The first engine could not search and the fallback failed too; the message names both,
    in each engine's own words (``plugin`` words it again for callers who may not read them)."""

    def __init__(
        self,
        first: Resolved,
        first_error: EngineUnavailable,
        fallback: Resolved,
        fallback_error: ToolError,
    ) -> None:
        also = FALLBACK_FAILED.format(name=fallback.engine.name)
        super().__init__(f"{first_error.message} {also}: {fallback_error.message}")
        self.first, self.first_error = first, first_error
        self.fallback, self.fallback_error = fallback, fallback_error


@dataclass(frozen=True)
class Answer:
    """The results, the engine that gave them, and, after a fallback, why the first did not."""

    results: list[SearchResult]
    answered: Resolved
    first: Resolved | None = None
    reason: str | None = None
    first_error: EngineUnavailable | None = None


def search_with_fallback(
    first: Resolved,
    fallback: Resolved | None,
    search: Search,
    ctx: ToolContext,
    user_agent: str,
) -> Answer:
    """Return the first engine's answer, or the fallback's when the first is unavailable.

    Raises the first engine's ``ToolError`` when there is no fallback or the failure is not
    one another engine could get past (a rejected key, say), ``BothFailed`` when the fallback
    fails too, and ``Cancelled`` when the turn is cancelled.
    """
    leave = FALLBACK_RESERVE_SECONDS if fallback is not None else 0.0
    try:
        return Answer(ask(first, search, ctx, user_agent, leave), first)
    except EngineUnavailable as exc:
        if fallback is None:
            raise
        unavailable = exc
    try:
        results = ask(fallback, search, ctx, user_agent, 0.0)
    except ToolError as exc:
        raise BothFailed(first, unavailable, fallback, exc) from None
    return Answer(results, fallback, first, unavailable.reason, unavailable)


def ask(
    resolved: Resolved,
    search: Search,
    ctx: ToolContext,
    user_agent: str,
    leave: float,
) -> list[SearchResult]:
    """Return one engine's results: count the search against the user's daily quota when it is
    made on the admin's key, wait for its slot, then search, ``leave`` seconds spared. A failure
    of the engine (not of the quota) is reported with ``report_search_failure``; a rate limit
    that says how long it lasts holds the engine's bucket that long (``MAX_HOLD_SECONDS`` at
    most), so that until then searches wait or go to the fallback without asking it.

    A user's base URL is reached through the guarded ``ctx.fetch``; the admin's engine through
    a ``SearchSession`` of this search alone, which the turn's signal can stop at any moment."""
    engine = resolved.engine
    if resolved.admins:  # a user's own key is theirs to spend
        try:
            ctx.quotas.take(SEARCHES)
        except QuotaUsed as exc:
            raise QuotaSpent(exc.message) from None
    bucket = bucket_name(engine, resolved.api_key, resolved.base_url)
    reserve = REQUEST_RESERVE_SECONDS + leave
    search = Search(search.query, search.count, resolved.api_key, resolved.base_url)
    own = None if resolved.users_base_url else SearchSession()
    try:
        wait_for_engine(engine, resolved.limit, bucket, ctx.rates, ctx.signal, reserve)
        return run_search(engine, search, own or ctx.fetch, ctx.signal, user_agent, leave)
    except ToolError as exc:
        report_search_failure(engine.id, failure_reason(exc))
        if isinstance(exc, EngineUnavailable) and exc.retry_after:
            ctx.rates.hold(bucket, min(exc.retry_after, MAX_HOLD_SECONDS))
        raise
    finally:
        if own is not None:
            own.close()
