"""SearXNG adapter: a GET of ``<baseURL>/search`` asking for JSON output."""

from __future__ import annotations

from marshmallow import fields

from tools.web_search.engine import (
    EngineBlocked,
    EngineRequest,
    Lenient,
    Search,
    SearchEngine,
    SearchResult,
    load_json,
)


class _Result(Lenient):
    # Not every entry is a page: a key/value table or an answer-like result has no url.
    url = fields.String(load_default=None, allow_none=True)
    title = fields.String(load_default="", allow_none=True)
    content = fields.String(load_default="", allow_none=True)


class _Response(Lenient):
    results = fields.List(fields.Nested(_Result), required=True)
    unresponsive_engines = fields.List(fields.List(fields.Raw()), load_default=list)


class SearxngEngine(SearchEngine):
    """SearXNG: results[] with title, url and content, from the instance at the base URL.

    Its JSON output is plain text (it escapes and highlights only for its HTML pages).
    """

    id = "searxng"
    name = "SearXNG"
    needs_base_url = True
    operators = ("site:example.com", '"exact phrase"', "-term")
    # Self-hosted: its own limiter (when on) and the engines behind it decide; go gently.
    rate_per_second = 1.0

    def request(self, search: Search) -> EngineRequest:
        """Return a GET of the instance's search endpoint in JSON format."""
        base = (search.base_url or "").rstrip("/")
        return EngineRequest("GET", f"{base}/search", params={"q": search.query, "format": "json"})

    def parse(self, body: str) -> list[SearchResult]:
        """Return the results[] that link a page; raise ``EngineBlocked`` when every engine
        behind it failed."""
        data = load_json(body, _Response)
        results = [
            SearchResult(r["title"] or "", r["url"], r["content"] or "")
            for r in data["results"]
            if r["url"]
        ]
        failed = [e for e in data["unresponsive_engines"] if e]
        if not results and failed:
            # A 200 with no results is not "nothing found" when its engines did not answer.
            reasons = ", ".join(_describe(e) for e in failed)
            raise EngineBlocked(
                f"SearXNG found nothing because the engines behind it failed: {reasons}. "
                "Try again later, or ask the instance's admin to check its engines."
            )
        return results

    def describe_error(self, status: int, body: str) -> str | None:
        """A 403 means the instance does not offer JSON output; a 401 asks for a login."""
        if status == 403:
            return (
                "The SearXNG instance refused JSON output. "
                "Enable the json format in its settings (search.formats)."
            )
        if status == 401:
            return "The SearXNG instance asked for a login, which Lookout cannot give."
        return None


def _describe(entry: list) -> str:
    name = str(entry[0])
    return f"{name} ({entry[1]})" if len(entry) > 1 and entry[1] else name
