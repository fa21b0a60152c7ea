"""SearXNG: recorded replies from an instance, its 403 without JSON, and failed engines."""

from __future__ import annotations

import json

import pytest
from responses import matchers

from tests.tools.web_search.conftest import MARKUP, MARKUP_AS_TEXT
from tools.api import ToolError
from tools.web_search.search import WEB_PAGE_HINT

BASE = "https://searx.example.org/searxng/"
URL = "https://searx.example.org/searxng/search"


@pytest.fixture
def searxng(web_search):
    return web_search(engine="searxng", baseURL=BASE, maxResults=2)


def test_searxng_results_are_sliced_to_the_count(searxng, search, engine_replies, recording):
    engine_replies.get(
        URL,
        body=recording("searxng_results.json"),
        match=[matchers.query_param_matcher({"q": "python requests", "format": "json"})],
    )
    output, citations = search(searxng)
    assert output["results"] == [
        {
            "title": "Requests: HTTP for Humans™ — Requests 2.32.3 documentation",
            "url": "https://requests.readthedocs.io/en/latest/",
            "snippet": "Requests is an elegant and simple HTTP library for Python, built for "
            "human beings.",
        },
        {
            "title": "requests · PyPI",
            "url": "https://pypi.org/project/requests/",
            "snippet": "Requests allows you to send HTTP/1.1 requests extremely easily.",
        },
    ]
    assert len(citations) == 2


def test_searxng_null_content_is_an_empty_snippet(web_search, search, engine_replies, recording):
    engine_replies.get(URL, body=recording("searxng_results.json"))
    output, _ = search(web_search(engine="searxng", baseURL=BASE))
    assert output["results"][2]["snippet"] == ""


def test_a_searxng_result_without_a_page_is_skipped_not_fatal(
    web_search, search, engine_replies, recording
):
    """Regression: one key/value entry (``"url": null``) made the whole response unreadable,
    losing every page result beside it."""
    engine_replies.get(URL, body=recording("searxng_keyvalue_result.json"))
    output, citations = search(web_search(engine="searxng", baseURL=BASE))
    assert output["results"] == [
        {
            "title": "Requests: HTTP for Humans™ — Requests 2.32.3 documentation",
            "url": "https://requests.readthedocs.io/en/latest/",
            "snippet": "Requests is an elegant and simple HTTP library for Python, built for "
            "human beings.",
        },
        {
            "title": "",
            "url": "https://pypi.org/project/requests/",
            "snippet": "Requests allows you to send HTTP/1.1 requests extremely easily.",
        },
    ]
    assert len(citations) == 2


def test_searxng_long_snippet_is_cut_to_500_characters(searxng, search, engine_replies, recording):
    body = json.loads(recording("searxng_results.json"))
    body["results"][0]["content"] = "a <b>b</b>\n " * 200
    engine_replies.get(URL, json=body)
    snippet = search(searxng)[0]["results"][0]["snippet"]
    assert len(snippet) == 500 and snippet.startswith("a b a b")


def test_searxng_text_follows_the_one_rule_for_every_engine(
    searxng, search, engine_replies, recording, angle_brackets_as_text
):
    """Regression: SearXNG's text was read as HTML, so ``std::vector<T,Allocator>`` lost
    ``<T,Allocator>``; then (issue 24) it was not read at all, so its tags and entities
    reached the model. A ``<`` that opens no HTML element is text; tags and entities are not."""
    engine_replies.get(URL, body=recording("searxng_angle_brackets.json"))
    output, _ = search(searxng)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == angle_brackets_as_text


def test_searxng_tags_and_entities_become_plain_text(searxng, search, engine_replies):
    engine_replies.get(URL, json={"results": [MARKUP]})
    output, _ = search(searxng)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == [MARKUP_AS_TEXT]


def test_searxng_with_no_results_returns_an_empty_list(searxng, search, engine_replies, recording):
    engine_replies.get(URL, body=recording("searxng_no_results.json"))
    assert search(searxng)[0]["results"] == []


def test_searxng_says_its_engines_failed_instead_of_no_results(
    searxng, search, engine_replies, recording
):
    engine_replies.get(URL, body=recording("searxng_engines_failed.json"))
    with pytest.raises(ToolError) as info:
        search(searxng)
    assert info.value.message == (
        "SearXNG found nothing because the engines behind it failed: google (timeout), "
        "duckduckgo (CAPTCHA), brave (Suspended: too many requests). Try again later, or ask "
        "the instance's admin to check its engines."
    )


@pytest.mark.parametrize("body", ["<!doctype html><title>SearXNG</title>", '{"query": "x"}'])
def test_searxng_malformed_body_is_a_tool_error_naming_searxng(
    searxng, search, engine_replies, body
):
    engine_replies.get(URL, body=body)
    with pytest.raises(ToolError) as info:
        search(searxng)
    web_page = " " + WEB_PAGE_HINT if body.startswith("<") else ""
    assert info.value.message == "SearXNG returned a response Lookout could not read." + web_page


@pytest.mark.parametrize(
    ("status", "name", "message"),
    [
        (
            403,
            "searxng_403.html",
            "The SearXNG instance refused JSON output. Enable the json format in its settings "
            "(search.formats).",
        ),
        (429, "searxng_429.html", "SearXNG's rate limit was reached."),
        (500, None, "SearXNG search failed (HTTP 500)."),
    ],
)
def test_searxng_error_statuses_become_sentences_naming_searxng(
    searxng, search, engine_replies, recording, status, name, message
):
    body = recording(name) if name else "Internal Server Error"
    engine_replies.get(URL, body=body, status=status)
    with pytest.raises(ToolError) as info:
        search(searxng)
    assert info.value.message == message


def test_a_searxng_infobox_is_a_result_when_it_links_a_page(
    web_search, search, engine_replies, recording
):
    """Regression: a query SearXNG answered with an infobox alone came back empty."""
    engine_replies.get(URL, body=recording("searxng_infobox_only.json"))
    output, citations = search(web_search(engine="searxng", baseURL=BASE))
    assert output["results"] == [
        {
            "title": "Requests (software)",
            "url": "https://en.wikipedia.org/wiki/Requests_(software)",
            "snippet": "Requests is an HTTP client library for the Python programming language.",
        }
    ]
    assert len(citations) == 1


def test_one_odd_searxng_entry_costs_that_entry_not_the_page(
    web_search, search, engine_replies, recording
):
    """Regression: a url that is not a string, a null entry, or an unresponsive engine named
    without a reason (older instances) made the whole response unreadable; a
    protocol-relative url was dropped."""
    engine_replies.get(URL, body=recording("searxng_odd_entries.json"))
    output, _ = search(web_search(engine="searxng", baseURL=BASE))
    assert [r["url"] for r in output["results"]] == [
        "https://requests.readthedocs.io/en/latest/",
        "https://pypi.org/project/requests/",
        "https://realpython.com/python-requests/",
    ]


def test_searxng_names_failed_engines_however_the_instance_lists_them(
    searxng, search, engine_replies
):
    body = {"query": "q", "results": [], "unresponsive_engines": ["qwant", ["google", None]]}
    engine_replies.get(URL, json=body)
    with pytest.raises(ToolError) as info:
        search(searxng)
    assert info.value.message.startswith(
        "SearXNG found nothing because the engines behind it failed: qwant, google. "
    )


@pytest.mark.parametrize(
    "location",
    [
        "https://searx.example.org/searxng/search?q=python+requests&format=json",
        "https://searx.example.org/searxng/",
    ],
)
def test_a_searxng_redirect_says_which_base_url_to_enter(
    web_search, search, engine_replies, location
):
    """Regression: an instance moved to https answered 301, and the sentence only gave the
    status, not the address to enter instead."""
    engine_replies.get(
        "http://searx.example.org/searxng/search", status=301, headers={"Location": location}
    )
    with pytest.raises(ToolError) as info:
        search(web_search(engine="searxng", baseURL="http://searx.example.org/searxng"))
    assert info.value.message == (
        "SearXNG search failed (HTTP 301). It redirects to https://searx.example.org/searxng; "
        "enter that as its base URL."
    )
