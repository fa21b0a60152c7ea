"""Kagi: recorded replies mapped to results, related searches skipped, errors from its list."""

from __future__ import annotations

import json

import pytest
from responses import matchers

from tests.tools.web_search.conftest import kept_of_odd_entries
from tools.api import ToolError
from tools.web_search.engines.kagi import URL
from tools.web_search.search import WEB_PAGE_HINT


@pytest.fixture
def kagi(web_search, api_key):
    return web_search(engine="kagi", apiKey=api_key, maxResults=5)


def test_kagi_results_skip_related_searches(kagi, search, engine_replies, recording, api_key):
    engine_replies.get(
        URL,
        body=recording("kagi_results.json"),
        match=[
            matchers.query_param_matcher({"q": "python requests", "limit": "5"}),
            matchers.header_matcher({"Authorization": f"Bot {api_key}"}),
        ],
    )
    output, citations = search(kagi)
    assert output["results"] == [
        {
            "title": "Requests: HTTP for Humans™",
            "url": "https://requests.readthedocs.io/en/latest/",
            "snippet": "Requests is an elegant and simple HTTP library for Python, built for "
            "human beings.",
        },
        {
            "title": "requests · PyPI",
            "url": "https://pypi.org/project/requests/",
            "snippet": "Requests allows you to send HTTP/1.1 requests extremely easily.",
        },
        {
            "title": "Python's Requests Library (Guide)",
            "url": "https://realpython.com/python-requests/",
            "snippet": "",
        },
    ]
    assert [c.title for c in citations][0] == "Requests: HTTP for Humans™"


def test_kagi_long_snippet_is_cut_to_500_characters(kagi, search, engine_replies, recording):
    body = json.loads(recording("kagi_results.json"))
    body["data"][0]["snippet"] = "<b>long</b> text " * 100
    engine_replies.get(URL, json=body)
    snippet = search(kagi)[0]["results"][0]["snippet"]
    assert len(snippet) == 500 and "<b>" not in snippet


def test_kagi_text_in_angle_brackets_is_kept(
    kagi, search, engine_replies, recording, angle_brackets
):
    """Kagi sends HTML: its highlight tags go, its escaped angle brackets stay as text."""
    engine_replies.get(URL, body=recording("kagi_angle_brackets.json"))
    output, _ = search(kagi)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == angle_brackets


def test_kagi_with_no_results_returns_an_empty_list(kagi, search, engine_replies, recording):
    engine_replies.get(URL, body=recording("kagi_no_results.json"))
    assert search(kagi)[0]["results"] == []


@pytest.mark.parametrize(
    "body", ['{"meta": {}, "data": null}', '{"data": [{"t": 0, "title": "no url"}]}', "<html/>"]
)
def test_kagi_malformed_body_is_a_tool_error_naming_kagi(kagi, search, engine_replies, body):
    engine_replies.get(URL, body=body)
    with pytest.raises(ToolError) as info:
        search(kagi)
    web_page = " " + WEB_PAGE_HINT if body.startswith("<") else ""
    assert info.value.message == "Kagi returned a response Lookout could not read." + web_page


@pytest.mark.parametrize(
    ("status", "name", "message"),
    [
        (
            401,
            "kagi_401.json",
            'The Kagi API key was rejected. Kagi said: "Malformed authorization token"',
        ),
        (
            400,
            "kagi_400_credit.json",
            "Kagi's API balance is used up. Top it up in Kagi's billing settings. Kagi said: "
            '"Insufficient credit to perform this request."',
        ),
        (429, "kagi_429.json", 'Kagi\'s rate limit was reached. Kagi said: "Too many requests"'),
        (503, None, "Kagi search failed (HTTP 503)."),
    ],
)
def test_kagi_error_statuses_become_sentences_naming_kagi(
    kagi, search, engine_replies, recording, status, name, message
):
    engine_replies.get(URL, body=recording(name) if name else "upstream down", status=status)
    with pytest.raises(ToolError) as info:
        search(kagi)
    assert info.value.message == message


def test_kagi_skips_entries_it_cannot_read_and_kinds_it_does_not_know(
    kagi, search, engine_replies, recording
):
    """Regression: one search entry without a url, a null title, or an entry of a kind Kagi
    added later made the whole response unreadable, losing the good results beside it."""
    engine_replies.get(URL, body=recording("kagi_odd_entries.json"))
    output, citations = search(kagi)
    assert output["results"] == kept_of_odd_entries()
    assert len(citations) == 3


def test_kagi_with_only_related_searches_found_nothing(kagi, search, engine_replies):
    body = {"meta": {"id": "x"}, "data": [{"t": 1, "list": ["python requests post"]}]}
    engine_replies.get(URL, json=body)
    output, citations = search(kagi)
    assert output["results"] == [] and citations == []


def test_an_error_body_sent_with_a_200_keeps_its_explanation(
    kagi, search, engine_replies, recording
):
    """Regression: an error body that came with a 200 read only "could not read", dropping
    the engine's own words on what was wrong."""
    engine_replies.get(URL, body=recording("kagi_401.json"))
    with pytest.raises(ToolError) as info:
        search(kagi)
    assert info.value.message == (
        'Kagi returned a response Lookout could not read. Kagi said: "Malformed authorization '
        'token"'
    )
