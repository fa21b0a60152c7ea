"""SearXNG adapter: a GET of ``<baseURL>/search`` asking for JSON output."""

from __future__ import annotations

from marshmallow import fields

from tools.web_search.engine import (
    EngineBlocked,
    EngineRequest,
    Lenient,
    MalformedResponse,
    Search,
    SearchEngine,
    SearchResult,
    load_entries,
    load_json,
)

# An instance lists every engine it asked; the sentence names the first few.
MAX_FAILED_NAMED = 10
MAX_NAME_CHARS = 100


class _Result(Lenient):
    # Not every entry is a page: a key/value table or an answer-like result has no url.
    url = fields.String(load_default=None, allow_none=True)
    title = fields.String(load_default="", allow_none=True)
    content = fields.String(load_default="", allow_none=True)


class _Infobox(Lenient):
    # An entity box (Wikipedia's, say): its id is the page it describes, when it has one.
    infobox = fields.String(load_default="", allow_none=True)
    id = fields.String(load_default=None, allow_none=True)
    content = fields.String(load_default="", allow_none=True)


class _Response(Lenient):
    results = fields.Raw(required=True)
    infoboxes = fields.Raw(load_default=None, allow_none=True)
    # Pairs of engine and reason; older instances name the engine alone.
    unresponsive_engines = fields.Raw(load_default=None, allow_none=True)


class SearxngEngine(SearchEngine):
    """SearXNG: results[] with title, url and content, from the instance at the base URL;
    infoboxes linking a page (id, infobox, content) follow them.

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
        """Return the results[] that link a page, then the infoboxes that do; raise
        ``EngineBlocked`` when every engine behind it failed, ``MalformedResponse`` when no
        result could be read."""
        data = load_json(body, _Response)
        results = [
            SearchResult(r["title"] or "", r["url"], r["content"] or "")
            for r in load_entries(data["results"], _Result)
            if r["url"]
        ]
        results += [
            SearchResult(box["infobox"] or "", box["id"], box["content"] or "")
            for box in _entries(data["infoboxes"], _Infobox)
            if box["id"]
        ]
        failed = [e for e in _list(data["unresponsive_engines"]) if e and _describe(e)]
        failed = failed[:MAX_FAILED_NAMED]
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


def _entries(entries: object, schema: type[Lenient]) -> list[dict]:
    """The entries of an optional list that ``schema`` loads; none when it is no list."""
    try:
        return load_entries(_list(entries), schema)
    except MalformedResponse:
        return []


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _describe(entry: object) -> str:
    if isinstance(entry, str):
        return entry[:MAX_NAME_CHARS]
    if not isinstance(entry, list) or not entry:
        return ""
    name = str(entry[0])[:MAX_NAME_CHARS]
    reason = str(entry[1])[:MAX_NAME_CHARS] if len(entry) > 1 and entry[1] else ""
    return f"{name} ({reason})" if reason else name
