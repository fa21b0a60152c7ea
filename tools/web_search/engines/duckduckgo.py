"""DuckDuckGo adapter: its HTML endpoint, scraped with lxml; best effort by nature."""

from __future__ import annotations

from urllib.parse import parse_qs, urljoin, urlsplit

import lxml.etree
import lxml.html

from tools.web_search.engine import EngineBlocked, EngineRequest, Search, SearchEngine, SearchResult

URL = "https://html.duckduckgo.com/html/"
BLOCKED = (
    "DuckDuckGo blocked the search. Try again later, or pick another engine in the web search "
    "settings."
)


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


_CONTAINER = f"//*[@id='links' or {_has_class('results')}]"
_RESULTS = f".//div[{_has_class('result')}]"
_ANOMALY = (
    "//*[contains(@class, 'anomaly') or @id='challenge-form' or contains(@action, 'anomaly')]"
)


class DuckDuckGoEngine(SearchEngine):
    """DuckDuckGo: each .result that is not an ad, with a.result__a and .result__snippet.

    Text is read from the parsed page, so escaped angle brackets stay text.
    """

    id = "duckduckgo"
    name = "DuckDuckGo"
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")

    def request(self, search: Search) -> EngineRequest:
        """Return the form post the HTML endpoint expects, with its own origin as Referer."""
        return EngineRequest(
            "POST",
            URL,
            data={"q": search.query, "b": ""},
            headers={"Referer": "https://html.duckduckgo.com/"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        """Return the organic results; raise ``EngineBlocked`` for a bot check or other page.

        A 200 is no proof of results: the bot check comes as 200 too, so a page without the
        results container is a block.
        """
        try:
            doc = lxml.html.document_fromstring(body)
        except (lxml.etree.ParserError, ValueError) as exc:
            raise EngineBlocked(BLOCKED) from exc
        containers = doc.xpath(_CONTAINER)
        if doc.xpath(_ANOMALY) or not containers:
            raise EngineBlocked(BLOCKED)
        results = []
        for node in containers[0].xpath(_RESULTS):
            result = _read(node)
            if result is not None:
                results.append(result)
        return results

    def describe_error(self, status: int, body: str) -> str | None:
        """Any status but 200 is DuckDuckGo refusing this server (202 is its bot check)."""
        return BLOCKED


def _read(node: lxml.html.HtmlElement) -> SearchResult | None:
    classes = (node.get("class") or "").split()
    if "result--ad" in classes or "result--no-result" in classes:
        return None
    links = node.xpath(f".//a[{_has_class('result__a')}]")
    if not links or not links[0].get("href"):
        return None
    url = unwrap(links[0].get("href", ""))
    if url is None or _is_pseudo_result(url):
        return None
    snippets = node.xpath(f".//*[{_has_class('result__snippet')}]")
    snippet = snippets[0].text_content() if snippets else ""
    return SearchResult(links[0].text_content(), url, snippet)


def unwrap(href: str) -> str | None:
    """Return the target of a ``/l/?uddg=`` redirect, decoded once; None for an ad link.

    The redirect comes relative, protocol-relative or absolute, with ``uddg`` anywhere in
    the query; direct links come back as they are.
    """
    absolute = urljoin("https://duckduckgo.com/", href.strip())
    parts = urlsplit(absolute)
    host = (parts.hostname or "").lower()
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if parts.path.startswith("/y.js"):
            return None
        if parts.path.startswith("/l/"):
            target = parse_qs(parts.query).get("uddg")
            return target[0] if target else None
    return absolute


def _is_pseudo_result(url: str) -> bool:
    # Gibberish queries can get a "search elsewhere" entry linking to Google's results.
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return host in ("google.com", "www.google.com") and parts.path.startswith("/search")
