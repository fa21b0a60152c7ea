"""Helpers for plugin authors' tests: a ToolContext without a turn, and a started plugin."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

import requests

from tools.api import (
    Citation,
    Ingester,
    Parsers,
    Plugin,
    Quotas,
    Rates,
    Signal,
    Tool,
    ToolContext,
)
from tools.citations import CitationList
from tools.host import PooledIngesters, start
from tools.parsers import InlineParsers
from tools.rates import UnlimitedRates


def tool_context_for_test(
    fetch: requests.Session | None = None,
    user: str = "user-1",
    conversation: str = "conversation-1",
    roles: list[str] | None = None,
    settings: dict[str, Any] | None = None,
    signal: Signal | None = None,
    turn_cache: MutableMapping[str, Any] | None = None,
    rates: Rates | None = None,
    quotas: Quotas | None = None,
) -> tuple[ToolContext, list[Citation]]:
    """Return a ToolContext and the list its ``cite`` fills, as production's accumulator does.

    ``fetch`` defaults to a ``GuardedSession``; ``roles`` to ``["user"]``; ``rates`` to no
    limits (pass a ``tools.rates.RedisRates`` to share them as the host does); ``quotas`` to
    ones that count nothing.
    """
    if fetch is None:
        from tools.net import GuardedSession

        fetch = GuardedSession()
    citations = CitationList()
    ctx = ToolContext(
        user=user,
        conversation=conversation,
        roles=list(roles if roles is not None else ["user"]),
        signal=signal or Signal(),
        fetch=fetch,
        cite=citations.cite,
        turn_cache=turn_cache if turn_cache is not None else {},
        settings=dict(settings or {}),
        rates=rates or UnlimitedRates(),
        quotas=quotas or Quotas(),
    )
    return ctx, citations.citations


def start_plugin(
    plugin: Plugin,
    options: dict[str, Any],
    ingesters: Iterable[Ingester] = (),
    app_name: str = "Lookout",
    public_url: str = "http://localhost:5000",
    parsers: Parsers | None = None,
) -> dict[str, Tool]:
    """Start ``plugin`` as the host does and return its tools by name.

    ``parsers`` (``PluginContext.parsers``) runs parsing and the ingesters: in-process by
    default; a ``tools.parsers.ParserPool`` runs them in parser processes, as the host does.
    Raises ``PluginConfigError`` when ``options`` are invalid.
    """
    parsers = parsers or InlineParsers()
    registry = PooledIngesters(parsers)
    for ingester in ingesters:
        registry.register(ingester)
    _, tools = start(plugin, options, registry, app_name, public_url, parsers=parsers)
    return {tool.name: tool for tool in tools}
