"""Hostile engine answers: an engine is anyone's server, read with the same limits as a page."""

from __future__ import annotations

import time

import pytest

from tests.tools.web_search.conftest import reply_with
from tools.api import ToolError
from tools.web_search.engines import brave, duckduckgo, kagi, tavily
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
    started = time.process_time()  # the work it costs, not the load of a busy machine
    output, _ = search(web_search(engine="duckduckgo"))
    assert time.process_time() - started < 5
    assert output["results"]


@pytest.mark.parametrize(
    "markup",
    ["<b>x</b> &amp; " * 250_000, "<b>" * 1_000_000, "<a <a <a " * 400_000],
    ids=["closed tags", "unclosed tags", "broken tags"],
)
def test_a_snippet_of_megabytes_of_markup_is_read_in_bounded_time_and_cut(
    markup, web_search, search, engine_replies, api_key
):
    """Issue 24: every engine's snippets are now read as markup; what is read is bounded."""
    result = {"title": "t", "url": "https://a.example/", "content": markup}
    engine_replies.post(tavily.URL, json={"results": [result]})
    started = time.process_time()  # the work it costs, not the load of a busy machine
    output, _ = search(web_search(engine="tavily", apiKey=api_key))
    assert time.process_time() - started < 5
    assert len(output["results"][0]["snippet"]) <= 500


BASE = "https://searx.example.org"
URLS = {"tavily": tavily.URL, "kagi": kagi.URL, "brave": brave.URL, "searxng": f"{BASE}/search"}


@pytest.mark.parametrize(
    ("engine_id", "body"),
    [
        ("tavily", {"results": [{"url": "https://a.example/", "title": "t"}] * 100_000}),
        ("kagi", {"data": [{"t": 1, "list": ["x"]}] * 100_000}),
        (
            "brave",
            {
                "type": "search",
                "news": {"results": [{"url": "https://a.example/", "title": "t"}] * 20_000},
                "mixed": {"main": [{"type": "news", "all": True}] * 20_000},
            },
        ),
        (
            "searxng",
            {"results": [], "unresponsive_engines": [["e" * 1000, "r" * 1000]] * 2_000},
        ),
    ],
    ids=["tavily results", "kagi related searches", "brave mixed", "searxng failed engines"],
)
def test_a_json_answer_of_a_hundred_thousand_entries_is_read_in_time_and_bounded(
    engine_id, body, web_search, search, engine_replies
):
    """Regression: every entry went through the schema (seconds for a large answer), Brave's
    ranking repeated its sections quadratically, and a list of failed engines made a
    sentence of megabytes."""
    engine_replies.add("POST" if engine_id == "tavily" else "GET", URLS[engine_id], json=body)
    tool = web_search(engine=engine_id, apiKey="key-123456", baseURL=BASE)
    started = time.process_time()  # the work it costs, not the load of a busy machine
    try:
        output, _ = search(tool)
        assert len(output["results"]) <= 5
    except ToolError as exc:
        assert engine_id == "searxng" and len(exc.message) < 3000
    assert time.process_time() - started < 3


def test_a_duckduckgo_page_of_thirty_thousand_results_is_read_in_time(
    web_search, search, engine_replies
):
    """Regression: every result of the page was checked for ads, seconds for a large page."""
    one = (
        '<div class="result"><a class="result__a" href="https://a.example/">t</a>'
        '<a class="result__snippet">s</a></div>'
    )
    page = f'<html><body><div id="links" class="results">{one * 30_000}</div></body></html>'
    engine_replies.post(duckduckgo.URL, body=page, content_type="text/html")
    started = time.process_time()  # the work it costs, not the load of a busy machine
    output, _ = search(web_search(engine="duckduckgo"))
    assert time.process_time() - started < 2
    assert [r["url"] for r in output["results"]] == ["https://a.example/"]


@pytest.mark.parametrize(
    "body",
    [
        "<!doctype html><html><head><title>Sign in</title></head><body>Sign in</body></html>",
        "\n  <html><body><h1>Welcome to nginx!</h1></body></html>",
    ],
)
def test_a_web_page_where_json_belongs_says_to_check_the_address(
    body, web_search, search, loopback
):
    """A web page sent with a 200 where the API's JSON belongs (a wrong address, a sign-in
    page in front of the engine) read only "could not read", with nothing saying where to look."""
    server = loopback(reply_with(body))
    with pytest.raises(ToolError) as info:
        search(web_search(engine="searxng", baseURL=server.url))
    assert info.value.message == (
        "SearXNG returned a response Lookout could not read. It sent a web page where Lookout "
        "expected JSON: check the engine's address, and any proxy or sign-in page between this "
        "server and the engine."
    )
