"""Brave: recorded replies mapped to results, and its error replies worded with its name."""

from __future__ import annotations

import json

import pytest
import responses

from tests.tools.web_search.conftest import kept_of_odd_entries
from tools.api import ToolError
from tools.web_search.engines.brave import URL
from tools.web_search.search import WEB_PAGE_HINT


@pytest.fixture
def brave(web_search, api_key):
    return web_search(engine="brave", apiKey=api_key, maxResults=5)


def test_brave_results_are_mapped_with_the_key_in_the_header(
    brave, search, engine_replies, recording, api_key
):
    engine_replies.get(URL, body=recording("brave_results.json"))
    output, citations = search(brave)
    request = engine_replies.calls[0].request
    assert request.headers["X-Subscription-Token"] == api_key
    assert request.headers["User-Agent"] == "Lookout (+http://localhost:5000)"
    assert "q=python+requests" in request.url and "count=5" in request.url
    assert [r["url"] for r in output["results"]] == [
        "https://requests.readthedocs.io/en/latest/",
        "https://pypi.org/project/requests/",
        "https://realpython.com/python-requests/",
    ]
    assert [c.url for c in citations] == [r["url"] for r in output["results"]]


def test_brave_strong_tags_and_entities_are_stripped(brave, search, engine_replies, recording):
    engine_replies.get(URL, body=recording("brave_results.json"))
    output, _ = search(brave)
    first = output["results"][0]
    assert first["title"] == "Requests: HTTP for Humans™ — Requests 2.32.3 documentation"
    assert first["snippet"] == (
        "Requests is an elegant and simple HTTP library for Python, built for human beings. "
        'Tom & Jerry\'s "favourite".'
    )
    assert output["results"][2]["snippet"].startswith("In this tutorial on Python's Requests")


def test_brave_long_snippet_is_cut_to_500_characters(brave, search, engine_replies, recording):
    body = json.loads(recording("brave_results.json"))
    body["web"]["results"][1]["description"] = "<strong>word</strong> " * 400
    engine_replies.get(URL, json=body)
    output, _ = search(brave)
    snippet = output["results"][1]["snippet"]
    assert len(snippet) == 500 and snippet.startswith("word word") and "<" not in snippet


def test_brave_without_a_web_key_found_nothing(brave, search, engine_replies, recording):
    engine_replies.get(URL, body=recording("brave_no_results.json"))
    output, citations = search(brave)
    assert output["results"] == [] and citations == []


@pytest.mark.parametrize(
    "body", ["<html>Service Unavailable</html>", '{"web": {"results": [{"url": "x"}]}}', "[]"]
)
def test_brave_malformed_body_is_a_tool_error_naming_brave(brave, search, engine_replies, body):
    engine_replies.get(URL, body=body)
    with pytest.raises(ToolError) as info:
        search(brave)
    web_page = " " + WEB_PAGE_HINT if body.startswith("<") else ""
    assert info.value.message == "Brave returned a response Lookout could not read." + web_page


@pytest.mark.parametrize(
    ("status", "name", "message"),
    [
        (
            422,
            "brave_422_token_invalid.json",
            'The Brave API key was rejected. Brave said: "The provided subscription token is '
            'invalid."',
        ),
        (
            422,
            "brave_422_validation.json",
            'Brave search failed (HTTP 422). Brave said: "Unable to validate request '
            'parameter(s). Field required (header x-subscription-token)"',
        ),
        (
            401,
            "brave_422_token_invalid.json",
            'The Brave API key was rejected. Brave said: "The provided subscription token is '
            'invalid."',
        ),
        (
            429,
            "brave_429.json",
            'Brave\'s rate limit was reached. Brave said: "Request rate limit exceeded for plan."',
        ),
        (
            500,
            "brave_500.json",
            'Brave search failed (HTTP 500). Brave said: "An unexpected error occurred."',
        ),
        (502, None, "Brave search failed (HTTP 502)."),
    ],
)
def test_brave_error_statuses_become_sentences_naming_brave(
    brave, search, engine_replies, recording, status, name, message
):
    body = recording(name) if name else "<html><body>Bad Gateway</body></html>"
    engine_replies.get(URL, body=body, status=status)
    with pytest.raises(ToolError) as info:
        search(brave)
    assert info.value.message == message


def test_brave_422_names_each_parameter_it_refused_within_300_characters(
    brave, search, engine_replies, recording
):
    """Regression: a 422 said what was wrong but not which parameter or header it was."""
    body = json.loads(recording("brave_422_validation.json"))
    entry = {
        "type": "less_than_equal",
        "loc": ["query", "count"],
        "msg": "Input should be less than or equal to 20",
        "input": "50",
        "ctx": {"le": 20},
    }
    body["error"]["meta"]["errors"] = [entry] * 12
    engine_replies.get(URL, json=body, status=422)
    with pytest.raises(ToolError) as info:
        search(brave)
    said = info.value.message.split(' Brave said: "', 1)[1][:-1]
    assert said.startswith(
        "Unable to validate request parameter(s). Input should be less than or equal to 20 "
        "(query parameter count); Input should be"
    )
    assert len(said) == 300 and said.endswith("…")


def test_brave_text_in_angle_brackets_is_kept(
    brave, search, engine_replies, recording, angle_brackets
):
    """Brave sends HTML: its highlight tags go, its escaped angle brackets stay as text."""
    engine_replies.get(URL, body=recording("brave_angle_brackets.json"))
    output, _ = search(brave)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == angle_brackets


def test_brave_is_asked_for_at_most_max_results(web_search, search, engine_replies, recording):
    tool = web_search(engine="brave", apiKey="key-123456", maxResults=2)
    engine_replies.get(
        URL,
        body=recording("brave_results.json"),
        match=[responses.matchers.query_param_matcher({"q": "python requests", "count": "2"})],
    )
    output, citations = search(tool)
    assert len(output["results"]) == 2 and len(citations) == 2


def test_one_odd_brave_result_costs_that_result_not_the_page(
    brave, search, engine_replies, recording
):
    """Regression: a null title or description, or one entry that is not a result, made the
    whole response unreadable and lost every good result beside it."""
    engine_replies.get(URL, body=recording("brave_odd_entries.json"))
    output, citations = search(brave)
    assert output["results"] == kept_of_odd_entries()
    assert [c.url for c in citations] == [r["url"] for r in output["results"]]


def test_brave_without_web_results_answers_with_its_news_and_videos_in_its_order(
    brave, search, engine_replies, recording
):
    """Regression: a query Brave answered only with news and videos came back empty."""
    engine_replies.get(URL, body=recording("brave_news_only.json"))
    output, _ = search(brave)
    assert [(r["title"], r["url"], r["snippet"]) for r in output["results"]] == [
        ("Lookout in 5 minutes", "https://video.example.com/watch?v=abc", "A short demo."),
        (
            "What changed in Lookout",
            "https://blog.example.net/lookout-changes",
            "A tour of the changes.",
        ),
        ("Lookout 2.0 is out", "https://news.example.org/lookout-2", "The release notes."),
    ]


def test_a_rate_limit_with_brave_s_headers_keeps_the_spec_sentence(
    brave, search, engine_replies, recording
):
    """Brave sends X-RateLimit headers with every answer: the 429's sentence stays the
    spec's, word for word, with Brave's own explanation after it and nothing more."""
    engine_replies.get(
        URL,
        body=recording("brave_429.json"),
        status=429,
        headers={
            "Retry-After": "1",
            "X-RateLimit-Limit": "1, 2000",
            "X-RateLimit-Remaining": "0, 1988",
            "X-RateLimit-Reset": "1, 1419704",
        },
    )
    with pytest.raises(ToolError) as info:
        search(brave)
    assert info.value.message == (
        'Brave\'s rate limit was reached. Brave said: "Request rate limit exceeded for plan."'
    )
