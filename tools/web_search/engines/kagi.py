"""Kagi search API (v0) adapter: a GET with the key as ``Authorization: Bot``."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from tools.web_search.engine import (
    EngineRequest,
    Lenient,
    MalformedResponse,
    Search,
    SearchEngine,
    SearchResult,
    load_entries,
    load_json,
)

# Kagi marks v0 deprecated, but it is the documented search API and the spec names it.
URL = "https://kagi.com/api/v0/search"
SEARCH_RESULT = 0


class _SearchResult(Lenient):
    t = fields.Integer(required=True, validate=validate.Equal(SEARCH_RESULT))
    url = fields.String(required=True)
    title = fields.String(load_default="", allow_none=True)
    snippet = fields.String(load_default="", allow_none=True)


class _Response(Lenient):
    data = fields.Raw(required=True)


class KagiEngine(SearchEngine):
    """Kagi: data[] entries with t 0 (search results); related searches (t 1) and other
    kinds are skipped, and so is a result without a url.

    Titles and snippets come as HTML: escaped text with ``<b>`` around the words that matched.
    """

    id = "kagi"
    name = "Kagi"
    needs_key = True
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")
    # Kagi documents no rate; each search is billed, so one a second until the admin says more.
    rate_per_second = 1.0

    def request(self, search: Search) -> EngineRequest:
        """Return a GET of the search endpoint with the bot token."""
        return EngineRequest(
            "GET",
            URL,
            params={"q": search.query, "limit": search.count},
            headers={"Authorization": f"Bot {search.api_key or ''}"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        """Return the t 0 entries that link a page; raise ``MalformedResponse`` for any other
        body, or when no search entry could be read."""
        data = load_json(body, _Response)
        # Related searches (t 1) and any kind Kagi adds later are no results; an entry whose
        # kind cannot be told is read as a result, so that it is counted when it is odd.
        if not isinstance(data["data"], list):
            raise MalformedResponse("data is not a list")
        entries = [e for e in data["data"] if not _is_other_kind(e)]
        return [
            SearchResult(e["title"] or "", e["url"], e["snippet"] or "")
            for e in load_entries(entries, _SearchResult)
        ]

    def describe_error(self, status: int, body: str) -> str | None:
        """Kagi reports an empty API balance as a 400."""
        if status == 400 and "credit" in body.lower():
            return "Kagi's API balance is used up. Top it up in Kagi's billing settings."
        return None

    def error_detail(self, body: Any) -> str | None:
        """Return the msg of each entry in Kagi's ``error`` list."""
        errors = body.get("error") if isinstance(body, dict) else None
        if not isinstance(errors, list):
            return None
        messages = [str(e["msg"]) for e in errors if isinstance(e, dict) and e.get("msg")]
        return "; ".join(messages) or None


def _is_other_kind(entry: Any) -> bool:
    kind = entry.get("t") if isinstance(entry, dict) else None
    return isinstance(kind, int) and not isinstance(kind, bool) and kind != SEARCH_RESULT
