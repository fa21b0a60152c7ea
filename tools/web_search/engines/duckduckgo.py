"""DuckDuckGo adapter: its HTML endpoint, scraped with lxml; best effort by nature."""

from __future__ import annotations

from html import escape
from urllib.parse import parse_qs, urljoin, urlsplit

import lxml.etree
import lxml.html

from tools.web_search.engine import (
    MAX_ENTRIES,
    EngineBlocked,
    EngineRequest,
    MalformedResponse,
    Search,
    SearchEngine,
    SearchResult,
)

URL = "https://html.duckduckgo.com/html/"
HOME = "https://duckduckgo.com/"
BLOCKED = (
    "DuckDuckGo blocked the search. Try again later, or pick another engine in the web search "
    "settings."
)


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


_CONTAINER = f"descendant::*[@id='links' or {_has_class('results')}]"
_RESULTS = f"descendant::div[{_has_class('result')}]"
_TITLE_LINK = f"descendant::a[{_has_class('result__a')} and normalize-space(@href)]"
_NO_RESULTS = f"descendant::*[{_has_class('no-results')} or {_has_class('result--no-result')}]"
_ANOMALY = (
    "descendant::*[contains(@class, 'anomaly') or @id='challenge-form'"
    " or contains(@action, 'anomaly')]"
)


class DuckDuckGoEngine(SearchEngine):
    """DuckDuckGo: each .result that is not an ad, with a.result__a and .result__snippet.

    Titles and snippets are handed over as the markup inside those elements, so escaped angle
    brackets stay text when the shared code reads them.
    """

    id = "duckduckgo"
    name = "DuckDuckGo"
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")
    # No documented limit: it is scraped, and it blocks an address that searches often.
    rate_per_second = 0.5

    def request(self, search: Search) -> EngineRequest:
        """Return the form post the HTML endpoint expects, with its own origin as Referer."""
        return EngineRequest(
            "POST",
            URL,
            data={"q": search.query, "b": ""},
            headers={"Referer": "https://html.duckduckgo.com/"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        """Return the organic results; raise ``EngineBlocked`` for a bot check or other page,
        ``MalformedResponse`` for a results page Lookout cannot read.

        A 200 is no proof of results: the bot check comes as 200 too, so a page without the
        results container, or without results and with the bot check's markup, is a block. An
        empty search says so ("No results."); results without a title link, or a container
        with neither, mean the markup changed.
        """
        try:
            doc = lxml.html.document_fromstring(body)
        except (lxml.etree.ParserError, ValueError) as exc:
            raise EngineBlocked(BLOCKED) from exc
        containers = doc.xpath(_CONTAINER)
        nodes = containers[0].xpath(_RESULTS)[:MAX_ENTRIES] if containers else []
        # Results are read wherever the page also carries a bot check's markup (a modal kept
        # in the page's template); only a page without them is a block.
        if not nodes and (not containers or doc.xpath(_ANOMALY)):
            raise EngineBlocked(BLOCKED)
        if not nodes and not doc.xpath(_NO_RESULTS):
            # Neither results nor the no-results notice: a page Lookout cannot read, not an
            # empty search (DuckDuckGo's markup changed).
            raise MalformedResponse("a results container without results")
        organic = [n for n in nodes if not _is_no_result(n) and not _is_ad(n)]
        linked = [(node, link) for node in organic for link in node.xpath(_TITLE_LINK)[:1]]
        if organic and not linked:
            raise MalformedResponse("results without the title links Lookout reads")
        results = []
        for node, link in linked:
            result = _read(node, link)
            if result is not None:
                results.append(result)
        return results

    def describe_error(self, status: int, body: str) -> str | None:
        """Any status but 200 is DuckDuckGo refusing this server (202 is its bot check)."""
        return BLOCKED

    def unavailable(self, status: int) -> str | None:
        """Any status but 200 is a block."""
        return "blocked"


def _is_no_result(node: lxml.html.HtmlElement) -> bool:
    return "result--no-result" in (node.get("class") or "").split()


def _read(node: lxml.html.HtmlElement, link: lxml.html.HtmlElement) -> SearchResult | None:
    url = unwrap(link.get("href", ""))
    if url is None or _is_pseudo_result(url):
        return None
    snippets = node.xpath(f"descendant::*[{_has_class('result__snippet')}]")
    snippet = inner_html(snippets[0]) if snippets else ""
    return SearchResult(inner_html(link), url, snippet)


def inner_html(element: lxml.html.HtmlElement) -> str:
    """Return the markup inside ``element``, as the page had it: the shared code makes every
    engine's text plain by one rule, so the page's entities are decoded there, once."""
    inside = escape(element.text or "", quote=False)
    return inside + "".join(lxml.html.tostring(child, encoding="unicode") for child in element)


def _is_ad(node: lxml.html.HtmlElement) -> bool:
    # DuckDuckGo marks ads on the result, on the block around it or with a badge inside it,
    # and sends their clicks through /y.js, sometimes inside its /l/ redirect.
    for element in (*node.iterancestors(), *node.iter()):
        if any(_is_ad_class(name) for name in (element.get("class") or "").split()):
            return True
    # Only a link naming y.js can be one; the filter spares parsing every other link.
    targets = (_target(href) for href in node.xpath(".//a/@href[contains(., 'y.js')]"))
    return any(target is not None and _is_ad_link(target) for target in targets)


def _is_ad_class(name: str) -> bool:
    # BEM names: an "ad" or "ads" modifier (result--ad, result--ad--small, badge--ad,
    # results--ads, result--ad__a), never a word that merely starts with "ad".
    return any(part.split("__")[0] in ("ad", "ads") for part in name.split("--")[1:])


def unwrap(href: str) -> str | None:
    """Return the target of a ``/l/?uddg=`` redirect, decoded once; None for an ad link.

    The redirect comes relative, protocol-relative or absolute, with ``uddg`` anywhere in
    the query; direct links come back as they are. An ad link goes through ``/y.js``,
    directly or inside the redirect.
    """
    target = _target(href)
    return None if target is None or _is_ad_link(target) else target


def _target(href: str) -> str | None:
    absolute = urljoin(HOME, href.strip())
    parts = urlsplit(absolute)
    if _is_duckduckgo(parts.hostname) and parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg")
        return target[0] if target else None
    return absolute


def _is_ad_link(url: str) -> bool:
    parts = urlsplit(urljoin(HOME, url.strip()))
    return _is_duckduckgo(parts.hostname) and parts.path.startswith("/y.js")


def _is_duckduckgo(host: str | None) -> bool:
    host = (host or "").lower()
    return host == "duckduckgo.com" or host.endswith(".duckduckgo.com")


def _is_pseudo_result(url: str) -> bool:
    # Gibberish queries can get a "search elsewhere" entry linking to Google's results, and
    # a "search instead" entry links to another DuckDuckGo search (any of its addresses with
    # a query): neither is a page found. DuckDuckGo's own pages (its privacy policy) are.
    parts = urlsplit(urljoin(HOME, url.strip()))
    host = (parts.hostname or "").lower()
    if _is_duckduckgo(host):
        return "q" in parse_qs(parts.query)
    return host in ("google.com", "www.google.com") and parts.path.startswith("/search")
