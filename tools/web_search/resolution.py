"""Picks the engine, key and base URL for one call from the admin's options and user settings."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.api import RateLimit, ToolError
from tools.web_search.engine import SearchEngine
from tools.web_search.options import DEFAULT, NO_FALLBACK

OWN_ENGINE_NEEDED = "Add your own search engine in the web search settings to search the web."
NOT_AVAILABLE = "Web search isn't available to you."


@dataclass(frozen=True)
class Resolved:
    """The engine to ask, its credentials, whether the base URL is the user's own, whether the
    engine and credentials are the admin's, the rate they may be asked at, and whether the
    user picked it (an engine of their own, even the admin's one)."""

    engine: SearchEngine
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    users_base_url: bool = False
    admins: bool = False
    limit: RateLimit = RateLimit(1.0)
    users_choice: bool = False


def admins_limit(engine: SearchEngine, rate: float | None, daily_cap: int | None) -> RateLimit:
    """Return the limit the admin set for their engine and key: their rate, else the engine's."""
    return RateLimit(rate or engine.rate_per_second, daily_cap)


def resolve_engine(
    engines: Mapping[str, SearchEngine],
    options: Mapping[str, Any],
    settings: Mapping[str, Any],
    roles: Sequence[str],
    logger: logging.Logger,
) -> Resolved:
    """Return what this call searches with; raise ``ToolError`` saying what the user must do.

    1. User engine ``default``, or user engines off: the admin's engine, key and base URL.
    2. Any other user engine: the user's key and base URL; the admin's values fill a blank
       only when the user picked the admin's engine and holds a role in adminEngineRoles.

    The admin's rate and daily cap go with the admin's engine and credentials, whoever searches
    with them; a user's own key is asked at the engine's documented rate.
    """
    may_use_admins = any(role in options["adminEngineRoles"] for role in roles)
    user_engines = bool(options["userEngines"])
    choice = (settings.get("engine") or DEFAULT) if user_engines else DEFAULT
    if choice == DEFAULT:
        if not may_use_admins:
            raise ToolError(OWN_ENGINE_NEEDED if user_engines else NOT_AVAILABLE)
        engine = engines[options["engine"]]
        return Resolved(
            engine,
            options.get("apiKey"),
            options.get("baseURL"),
            admins=True,
            limit=admins_limit(engine, options.get("rate"), options.get("dailyCap")),
        )
    engine = engines.get(str(choice))
    if engine is None:
        logger.warning("a user's web search engine %r is no longer installed", str(choice)[:100])
        raise ToolError(
            f"Your web search engine {choice} is no longer installed. "
            "Pick another engine in the web search settings."
        )
    api_key = _given(settings.get("apiKey"))
    base_url = _given(settings.get("baseURL"))
    users_base_url = base_url is not None
    if may_use_admins and choice == options["engine"]:
        api_key = api_key or options.get("apiKey")
        base_url = base_url or options.get("baseURL")
    if engine.needs_key and not api_key:
        raise ToolError(f"Add your {engine.name} API key in the web search settings.")
    if engine.needs_base_url and not base_url:
        raise ToolError(f"Add your {engine.name} base URL in the web search settings.")
    api_key = api_key if engine.needs_key else None
    base_url = base_url if engine.needs_base_url else None
    admins = (
        choice == options["engine"]
        and api_key == (options.get("apiKey") if engine.needs_key else None)
        and base_url == (options.get("baseURL") if engine.needs_base_url else None)
    )
    limit = (
        admins_limit(engine, options.get("rate"), options.get("dailyCap"))
        if admins
        else RateLimit(engine.rate_per_second)
    )
    return Resolved(
        engine,
        api_key,
        base_url,
        users_base_url=users_base_url and engine.needs_base_url,
        admins=admins,
        limit=limit,
        users_choice=True,
    )


def resolve_fallback(
    engines: Mapping[str, SearchEngine],
    options: Mapping[str, Any],
    roles: Sequence[str],
    first: Resolved,
) -> Resolved | None:
    """Return the admin's fallback engine with its credentials and limit, or None.

    The fallback is the admin's engine and key too, so it follows the same rule: only a
    caller holding a role in adminEngineRoles may search with it, and only for a search with
    the admin's engine. The admin's key pays only when the user chose no engine of their own,
    so a user's own engine failing gives the user its error, never the fallback's results.
    """
    engine = engines.get(options.get("fallbackEngine") or NO_FALLBACK)
    if engine is None or first.users_choice:
        return None
    if not any(role in options["adminEngineRoles"] for role in roles):
        return None
    return Resolved(
        engine,
        options.get("fallbackApiKey") if engine.needs_key else None,
        options.get("fallbackBaseURL") if engine.needs_base_url else None,
        admins=True,
        limit=admins_limit(engine, options.get("fallbackRate"), options.get("fallbackDailyCap")),
    )


def _given(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
