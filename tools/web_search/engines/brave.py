"""Brave Search API adapter: a GET with the key in X-Subscription-Token."""

from __future__ import annotations

from typing import Any

import marshmallow
from marshmallow import fields, validate

from tools.web_search.engine import (
    MAX_ENTRIES,
    EngineRequest,
    Lenient,
    Search,
    SearchEngine,
    SearchResult,
    load_entries,
    load_json,
    validation_messages,
)

URL = "https://api.search.brave.com/res/v1/web/search"
# The kinds of result that link a page, besides web: what Brave answers when it has no web
# results (a breaking news query, say). Its FAQ answers, infobox and places are no pages.
OTHER_PAGES = ("news", "videos", "discussions")


class _Result(Lenient):
    title = fields.String(load_default="", allow_none=True)
    url = fields.String(required=True)
    description = fields.String(load_default="", allow_none=True)


class _Section(Lenient):
    results = fields.Raw(load_default=list, allow_none=True)


class _Reference(Lenient):
    type = fields.String(required=True)
    index = fields.Integer(load_default=None, allow_none=True)
    all = fields.Boolean(load_default=False, allow_none=True)


class _Response(Lenient):
    type = fields.String(required=True, validate=validate.Equal("search"))
    # Brave leaves out ``web`` (and every other section) when nothing was found.
    web = fields.Nested(_Section, load_default=None, allow_none=True)
    news = fields.Nested(_Section, load_default=None, allow_none=True)
    videos = fields.Nested(_Section, load_default=None, allow_none=True)
    discussions = fields.Nested(_Section, load_default=None, allow_none=True)
    # The ranking of the sections: a hint, read only as far as it makes sense.
    mixed = fields.Raw(load_default=None, allow_none=True)


class BraveEngine(SearchEngine):
    """Brave Search: web.results[] with title, url and description; without any, its news,
    videos and discussions, which have the same three fields.

    Titles and descriptions come as HTML: escaped text with ``<strong>`` around the words
    that matched.
    """

    id = "brave"
    name = "Brave"
    needs_key = True
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")
    # Brave's free plan allows 1 query a second (paid plans 20 to 50).
    rate_per_second = 1.0

    def request(self, search: Search) -> EngineRequest:
        """Return a GET of the web search endpoint with the subscription token."""
        return EngineRequest(
            "GET",
            URL,
            params={"q": search.query, "count": search.count},
            headers={"X-Subscription-Token": search.api_key or "", "Accept": "application/json"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        """Return web.results[], or without any the news, videos and discussions in the
        order of mixed.main; raise ``MalformedResponse`` for any other body."""
        data = load_json(body, _Response)
        found = _results(data["web"])
        if not found:
            found = _other_pages(data)
        return [SearchResult(r["title"] or "", r["url"], r["description"] or "") for r in found]

    def describe_error(self, status: int, body: str) -> str | None:
        """Brave rejects a key with a 422 whose code is SUBSCRIPTION_TOKEN_INVALID."""
        if status == 422 and "SUBSCRIPTION_TOKEN_INVALID" in body:
            return f"The {self.name} API key was rejected."
        return None

    def error_detail(self, body: Any) -> str | None:
        """Return error.detail, then each of error.meta.errors with the parameter it names."""
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict):
            return None
        detail = error.get("detail") if isinstance(error.get("detail"), str) else None
        meta = error.get("meta")
        where = validation_messages(meta.get("errors")) if isinstance(meta, dict) else None
        return " ".join(part for part in (detail, where) if part) or None


def _results(section: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not section or section["results"] is None:
        return []
    return load_entries(section["results"], _Result)


def _other_pages(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The news, videos and discussions, in the order mixed.main ranks them, then the rest."""
    sections = {kind: _results(data[kind]) for kind in OTHER_PAGES}
    ranked: list[dict[str, Any]] = []
    mixed = data["mixed"] if isinstance(data["mixed"], dict) else {}
    main = mixed.get("main") if isinstance(mixed.get("main"), list) else []
    for entry in main[:MAX_ENTRIES]:
        if len(ranked) >= MAX_ENTRIES:
            break
        try:
            reference = _Reference().load(entry)
        except (TypeError, ValueError, marshmallow.ValidationError):
            continue  # the order is a hint: an odd reference loses no result
        results = sections.get(reference["type"], [])
        if reference["all"]:
            ranked.extend(results)
        elif reference["index"] is not None and 0 <= reference["index"] < len(results):
            ranked.append(results[reference["index"]])
    placed = {id(r) for r in ranked}
    return ranked + [r for kind in OTHER_PAGES for r in sections[kind] if id(r) not in placed]
