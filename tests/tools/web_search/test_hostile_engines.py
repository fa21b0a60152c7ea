"""Hostile engine answers: an engine is anyone's server, read with the same limits as a page."""

from __future__ import annotations

import time

import pytest

from tests.tools.web_search.conftest import reply_with
from tools.api import ToolError
from tools.web_search.engines import brave, duckduckgo
from tools.web_search.search import MAX_BODY_BYTES


@pytest.mark.parametrize(
    "body",
    [
        '{"results": [' + '{"title": "t", "url": "https://a.example/", "content": "c"},' * 120_000,
        "[" * 200_000 + "]" * 200_000,
        '{"results": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001,
    ],
    ids=["over the size limit", "nested arrays", "nested objects"],
)
def test_a_huge_or_deeply_nested_json_answer_is_an_unreadable_response(
    body, web_search, search, loopback
):
    server = loopback(reply_with(body))
    with pytest.raises(ToolError) as info:
        search(web_search(engine="searxng", baseURL=server.url))
    assert info.value.message == "SearXNG returned a response Lookout could not read."


def test_a_deeply_nested_error_body_still_gives_the_status_sentence(
    web_search, search, engine_replies, api_key
):
    engine_replies.get(brave.URL, body="[" * 200_000, status=500)
    with pytest.raises(ToolError) as info:
        search(web_search(engine="brave", apiKey=api_key))
    assert info.value.message == "Brave search failed (HTTP 500)."


def test_a_five_megabyte_duckduckgo_page_is_read_in_time(
    web_search, search, engine_replies, recording
):
    recorded = recording("duckduckgo_results.html")
    padding = "<div>" + "<span>x</span>" * 350_000 + "</div>"
    page = recorded.replace("</body>", padding + "</body>")
    assert MAX_BODY_BYTES - 200_000 < len(page.encode()) < MAX_BODY_BYTES
    engine_replies.post(duckduckgo.URL, body=page, content_type="text/html")
    started = time.monotonic()
    output, _ = search(web_search(engine="duckduckgo"))
    assert time.monotonic() - started < 5
    assert output["results"]
