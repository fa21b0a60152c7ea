"""Tavily: recorded replies mapped to results, and its three error body shapes."""

from __future__ import annotations

import json

import pytest
from responses import matchers

from tests.tools.web_search.conftest import MARKUP, MARKUP_AS_TEXT, kept_of_odd_entries
from tools.api import ToolError
from tools.web_search.engines.tavily import URL


@pytest.fixture
def tavily(web_search, api_key):
    return web_search(engine="tavily", apiKey=api_key, maxResults=3)


def test_tavily_results_are_mapped_from_a_json_post(
    tavily, search, engine_replies, recording, api_key
):
    engine_replies.post(
        URL,
        body=recording("tavily_results.json"),
        match=[
            matchers.json_params_matcher(
                {"query": "python requests", "max_results": 3, "search_depth": "basic"}
            ),
            matchers.header_matcher({"Authorization": f"Bearer {api_key}"}),
        ],
    )
    output, citations = search(tavily)
    assert [r["title"] for r in output["results"]] == [
        "Requests: HTTP for Humans™ — Requests 2.32.3 documentation",
        "requests · PyPI",
        "Quickstart — Requests 2.32.3 documentation",
    ]
    assert len(citations) == 3


def test_tavily_text_follows_the_one_rule_for_every_engine(
    tavily, search, engine_replies, recording, angle_brackets_as_text
):
    """Regression: Tavily's text was read as HTML, so ``std::vector<T,Allocator>`` lost
    ``<T,Allocator>``; then (issue 24) it was not read at all, so its tags and entities
    reached the model. A ``<`` that opens no HTML element is text; tags and entities are not."""
    engine_replies.post(URL, body=recording("tavily_angle_brackets.json"))
    output, _ = search(tavily)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == angle_brackets_as_text


def test_tavily_tags_and_entities_become_plain_text(tavily, search, engine_replies):
    engine_replies.post(URL, json={"results": [MARKUP]})
    output, _ = search(tavily)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == [MARKUP_AS_TEXT]


def test_tavily_long_snippet_is_cut_to_500_characters(tavily, search, engine_replies, recording):
    body = json.loads(recording("tavily_results.json"))
    body["results"][0]["content"] = "x" * 5000
    engine_replies.post(URL, json=body)
    output, _ = search(tavily)
    assert len(output["results"][0]["snippet"]) == 500


def test_tavily_with_no_results_returns_an_empty_list(tavily, search, engine_replies, recording):
    engine_replies.post(URL, body=recording("tavily_no_results.json"))
    assert search(tavily)[0]["results"] == []


@pytest.mark.parametrize("body", ['{"answer": "42"}', "not json", '{"results": [{"title": 1}]}'])
def test_tavily_malformed_body_is_a_tool_error_naming_tavily(tavily, search, engine_replies, body):
    engine_replies.post(URL, body=body)
    with pytest.raises(ToolError) as info:
        search(tavily)
    assert info.value.message == "Tavily returned a response Lookout could not read."


@pytest.mark.parametrize(
    ("status", "name", "message"),
    [
        (
            401,
            "tavily_401.json",
            'The Tavily API key was rejected. Tavily said: "Unauthorized: missing or invalid API '
            'key."',
        ),
        (
            432,
            "tavily_432.json",
            "Tavily's plan usage limit was reached. Tavily said: \"This request exceeds your "
            "plan's set usage limit. Please upgrade your plan or contact support@tavily.com\"",
        ),
        (
            433,
            "tavily_433.json",
            "Tavily's pay-as-you-go limit was reached. Tavily said: \"This request exceeds the "
            'pay-as-you-go limit. You can increase your limit on the Tavily dashboard."',
        ),
        (
            422,
            "tavily_422.json",
            'Tavily search failed (HTTP 422). Tavily said: "Input should be less than or equal '
            "to 20 (body field max_results); String should have at most 400 characters (body "
            'field query)"',
        ),
        (
            429,
            "tavily_429.json",
            "Tavily's rate limit was reached. Tavily said: \"Your request has been blocked due "
            'to excessive requests. Please reduce rate of requests."',
        ),
    ],
)
def test_tavily_error_statuses_become_sentences_naming_tavily(
    tavily, search, engine_replies, recording, status, name, message
):
    engine_replies.post(URL, body=recording(name), status=status)
    with pytest.raises(ToolError) as info:
        search(tavily)
    assert info.value.message == message


def test_one_odd_tavily_result_costs_that_result_not_the_page(
    tavily, search, engine_replies, recording
):
    """Regression: a null title or content, a result without a url, or an answer and image
    objects beside the results made the whole response unreadable."""
    engine_replies.post(URL, body=recording("tavily_odd_entries.json"))
    output, citations = search(tavily)
    assert output["results"] == kept_of_odd_entries("A guide.")
    assert len(citations) == 3


def test_tavily_rate_limit_keeps_the_spec_sentence_and_its_explanation(
    tavily, search, engine_replies, recording
):
    """The 429 sentence is the spec's, followed by Tavily's explanation, whatever the
    Retry-After header says."""
    engine_replies.post(
        URL, body=recording("tavily_429.json"), status=429, headers={"Retry-After": "30"}
    )
    with pytest.raises(ToolError) as info:
        search(tavily)
    assert info.value.message == (
        "Tavily's rate limit was reached. Tavily said: \"Your request has been blocked due to "
        'excessive requests. Please reduce rate of requests."'
    )
