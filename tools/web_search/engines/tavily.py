"""Tavily search API adapter: a JSON POST with the key as a bearer token."""

from __future__ import annotations

from typing import Any

from marshmallow import fields

from tools.web_search.engine import (
    EngineRequest,
    Lenient,
    Search,
    SearchEngine,
    SearchResult,
    load_entries,
    load_json,
    validation_messages,
)

URL = "https://api.tavily.com/search"


class _Result(Lenient):
    title = fields.String(load_default="", allow_none=True)
    url = fields.String(required=True)
    content = fields.String(load_default="", allow_none=True)


class _Response(Lenient):
    # Beside the results: an answer, images (URLs or objects) and follow-up questions, when
    # asked for; none of them is a page to cite.
    results = fields.Raw(required=True)


class TavilyEngine(SearchEngine):
    """Tavily: results[] with title, url and content.

    Tavily sends text read from the pages, not HTML: a ``<`` in it is a character of the text.
    """

    id = "tavily"
    name = "Tavily"
    needs_key = True
    operators = ()
    # Tavily allows 100 requests a minute with a development key (1,000 with a production one).
    rate_per_second = 100 / 60

    def request(self, search: Search) -> EngineRequest:
        """Return a POST of the query with a basic search depth."""
        return EngineRequest(
            "POST",
            URL,
            json={"query": search.query, "max_results": search.count, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {search.api_key or ''}"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        """Return results[] that have a url; raise ``MalformedResponse`` for any other body,
        or when no result could be read."""
        data = load_json(body, _Response)
        return [
            SearchResult(r["title"] or "", r["url"], r["content"] or "")
            for r in load_entries(data["results"], _Result)
        ]

    def describe_error(self, status: int, body: str) -> str | None:
        """Tavily's own statuses for a used-up plan (432) and pay-as-you-go limit (433)."""
        if status == 432:
            return "Tavily's plan usage limit was reached."
        if status == 433:
            return "Tavily's pay-as-you-go limit was reached."
        return None

    def unavailable(self, status: int) -> str | None:
        """A used-up plan or pay-as-you-go limit is a limit another engine may get past."""
        return "rate-limited" if status in (432, 433) else super().unavailable(status)

    def error_detail(self, body: Any) -> str | None:
        """Return detail.error, each validation entry with where it applies, or an error."""
        if not isinstance(body, dict):
            return None
        detail = body.get("detail")
        if isinstance(detail, dict) and isinstance(detail.get("error"), str):
            return detail["error"]
        if isinstance(detail, list):
            return validation_messages(detail)
        if isinstance(detail, str):
            return detail
        error = body.get("error")
        return error if isinstance(error, str) else None
