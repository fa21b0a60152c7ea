"""Brave Search API adapter: a GET with the key in X-Subscription-Token."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from tools.web_search.engine import (
    EngineRequest,
    Lenient,
    Search,
    SearchEngine,
    SearchResult,
    load_json,
    text_from_html,
    validation_messages,
)

URL = "https://api.search.brave.com/res/v1/web/search"


class _Result(Lenient):
    title = fields.String(required=True)
    url = fields.String(required=True)
    description = fields.String(load_default="")


class _Web(Lenient):
    results = fields.List(fields.Nested(_Result), load_default=list)


class _Response(Lenient):
    type = fields.String(required=True, validate=validate.Equal("search"))
    # Brave leaves out ``web`` altogether when nothing was found.
    web = fields.Nested(_Web, load_default=None)


class BraveEngine(SearchEngine):
    """Brave Search: web.results[] with title, url and description.

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
        """Return web.results[]; raise ``MalformedResponse`` for any other body."""
        data = load_json(body, _Response)
        web = data["web"] or {"results": []}
        return [
            SearchResult(text_from_html(r["title"]), r["url"], text_from_html(r["description"]))
            for r in web["results"]
        ]

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
