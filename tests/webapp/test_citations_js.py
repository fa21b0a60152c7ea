"""The chat's citation helpers (webapp/static/citations.js), computed in Node: what Copy writes,
the link to a passage, and the line a card shows for an unsupported citation."""

from __future__ import annotations

from tests.support.node import run_node
from webapp.openai_api.answers import numbered_sources, reply_text, sources_markdown


def call(function: str, *args):
    return run_node("citations.js", function, [list(args)])[0]


PARTS = [
    {"type": "source", "url": "https://a.example/", "title": "A [draft]", "number": 1},
    {"type": "text", "text": "Claim [1]. Other [2]."},
    {"type": "source", "url": "https://b.example/x (y)", "title": None, "number": 2},
]


def test_copy_keeps_the_markers_and_appends_the_sources_as_the_openai_endpoint_does():
    expected = reply_text(PARTS) + sources_markdown(numbered_sources(PARTS))
    assert call("copyText", PARTS) == expected
    assert expected.endswith(
        "Sources:\n1. [A \\[draft\\]](https://a.example/)\n"
        "2. [https://b.example/x (y)](https://b.example/x%20%28y%29)"
    )
    assert call("copyText", [{"type": "text", "text": "No sources."}]) == "No sources."


def test_a_passage_link_is_a_text_fragment_with_its_own_syntax_escaped():
    short = call("passageUrl", "https://e.example/p#old", "Built in 1882 - by Douglass, & co")
    assert (
        short == "https://e.example/p#:~:text=Built%20in%201882%20%2D%20by%20Douglass%2C%20%26%20co"
    )
    words = " ".join(f"w{i}" for i in range(20))
    assert call("passageUrl", "https://e.example/", words) == (
        "https://e.example/#:~:text=w0%20w1%20w2%20w3%20w4%20w5,w14%20w15%20w16%20w17%20w18%20w19"
    )
    assert call("passageUrl", "https://e.example/", "") == "https://e.example/"


def test_a_card_says_why_a_citation_is_not_supported():
    assert call("statusLine", {"status": "partly", "missing": ["1987", "Paris"]}) == (
        "Partly: the page does not mention 1987, Paris"
    )
    assert call("statusLine", {"status": "not_found"}) == "Not found in what was read"
    assert call("statusLine", {"status": "snippet_only"}) == "Only the search snippet was checked"
    assert call("statusLine", {"status": "supported"}) == ""
    assert call("statusLine", None) == ""


def test_live_sources_without_numbers_are_numbered_in_order_of_arrival():
    live = [{"type": "source", "url": u, "title": None} for u in ("https://a/", "https://b/")]
    assert list(call("numberedSources", live)) == ["1", "2"]
