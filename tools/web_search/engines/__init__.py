"""The installed search engines: adding one is a new module and one line here."""

from __future__ import annotations

from tools.web_search.engine import SearchEngine
from tools.web_search.engines.brave import BraveEngine
from tools.web_search.engines.duckduckgo import DuckDuckGoEngine
from tools.web_search.engines.kagi import KagiEngine
from tools.web_search.engines.searxng import SearxngEngine
from tools.web_search.engines.tavily import TavilyEngine

ENGINES: list[SearchEngine] = [
    DuckDuckGoEngine(),
    BraveEngine(),
    TavilyEngine(),
    SearxngEngine(),
    KagiEngine(),
]
