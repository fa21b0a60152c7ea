"""The web_search plugin: one tool backed by the admin's or the user's search engine."""

from __future__ import annotations

from tools.web_search.engine import (
    EngineBlocked,
    EngineRequest,
    MalformedResponse,
    Search,
    SearchEngine,
    SearchResult,
)
from tools.web_search.engines import ENGINES
from tools.web_search.plugin import create_web_search

plugin = create_web_search(ENGINES)

__all__ = [
    "ENGINES",
    "EngineBlocked",
    "EngineRequest",
    "MalformedResponse",
    "Search",
    "SearchEngine",
    "SearchResult",
    "create_web_search",
    "plugin",
]
