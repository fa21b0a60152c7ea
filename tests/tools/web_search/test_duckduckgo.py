"""DuckDuckGo: the scraped HTML endpoint, its redirect links, ads, and its block pages."""

from __future__ import annotations

import pytest
from responses import matchers

from tools.api import ToolError
from tools.web_search.engines.duckduckgo import URL, unwrap

BLOCKED = (
    "DuckDuckGo blocked the search. Try again later, or pick another engine in the web search "
    "settings."
)
TARGET = "https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D%2520"


@pytest.fixture
def duckduckgo(web_search):
    return web_search(engine="duckduckgo", maxResults=10)


def test_duckduckgo_is_asked_with_a_form_post_and_its_own_referer(
    duckduckgo, search, engine_replies, recording
):
    engine_replies.post(
        URL,
        body=recording("duckduckgo_results.html"),
        match=[
            matchers.header_matcher(
                {
                    "Referer": "https://html.duckduckgo.com/",
                    "User-Agent": "Lookout (+http://localhost:5000)",
                }
            ),
        ],
    )
    search(duckduckgo)
    assert engine_replies.calls[0].request.body == "q=python+requests&b="


def test_duckduckgo_redirect_links_are_unwrapped_and_ads_are_skipped(
    duckduckgo, search, engine_replies, recording
):
    engine_replies.post(URL, body=recording("duckduckgo_results.html"))
    output, citations = search(duckduckgo)
    assert [r["url"] for r in output["results"]] == [
        "https://requests.readthedocs.io/en/latest/",
        "https://pypi.org/project/requests/",
        "https://realpython.com/python-requests/?src=ddg&x=%25",
        "https://www.w3schools.com/python/module_requests.asp",
    ]
    assert not any("Sponsored" in r["title"] for r in output["results"])
    assert [c.url for c in citations] == [r["url"] for r in output["results"]]


def test_duckduckgo_tags_and_entities_are_stripped(duckduckgo, search, engine_replies, recording):
    engine_replies.post(URL, body=recording("duckduckgo_results.html"))
    first, _, third, _ = search(duckduckgo)[0]["results"]
    assert first["title"] == "Requests: HTTP for Humans™ — Requests 2.32 documentation"
    assert first["snippet"] == (
        "Requests is an elegant and simple HTTP library for Python, built for human beings. "
        'It\'s "the" way.'
    )
    assert third["title"] == "Python's Requests Library (Guide) – Real Python"
    assert "you'll see some" in third["snippet"]


def test_duckduckgo_long_snippet_is_cut_to_500_characters(
    duckduckgo, search, engine_replies, recording
):
    long = "<b>very</b> long &amp; " * 100
    page = recording("duckduckgo_results.html").replace(
        "Requests allows you to send", long + "Requests allows you to send"
    )
    engine_replies.post(URL, body=page)
    snippet = search(duckduckgo)[0]["results"][1]["snippet"]
    assert len(snippet) == 500 and snippet.startswith("very long & very long &")


def test_duckduckgo_no_results_page_is_an_empty_list(duckduckgo, search, engine_replies, recording):
    engine_replies.post(URL, body=recording("duckduckgo_no_results.html"))
    output, citations = search(duckduckgo, query="qzxwvkjhgfqpl")
    assert output["results"] == [] and citations == []


@pytest.mark.parametrize("status", [202, 200, 403])
def test_a_duckduckgo_block_page_is_an_error_not_an_empty_result(
    duckduckgo, search, engine_replies, recording, status
):
    engine_replies.post(URL, body=recording("duckduckgo_anomaly.html"), status=status)
    with pytest.raises(ToolError) as info:
        search(duckduckgo)
    assert info.value.message == BLOCKED


def test_a_duckduckgo_results_page_carrying_the_bot_check_markup_is_read(
    duckduckgo, search, engine_replies, recording
):
    """A page whose template keeps the bot check's modal (hidden) beside real results was taken
    for a block: the search failed with every result there to read."""
    modal = (
        '<div class="anomaly-modal__mask" style="display: none">'
        '<div class="anomaly-modal__modal" data-testid="anomaly-modal">'
        '<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>'
        "</div></div>"
    )
    page = recording("duckduckgo_results.html").replace("<body>", f"<body>{modal}", 1)
    assert modal in page
    engine_replies.post(URL, body=page)
    output, _ = search(duckduckgo)
    assert [r["url"] for r in output["results"]][:2] == [
        "https://requests.readthedocs.io/en/latest/",
        "https://pypi.org/project/requests/",
    ]


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, "<html><body><p>Something else</p></body></html>"), (200, ""), (500, "oops"), (429, "")],
)
def test_duckduckgo_page_without_results_container_or_non_200_is_blocked(
    duckduckgo, search, engine_replies, status, body
):
    engine_replies.post(URL, body=body, status=status)
    with pytest.raises(ToolError) as info:
        search(duckduckgo)
    assert info.value.message == BLOCKED


@pytest.mark.parametrize(
    "href",
    [
        f"//duckduckgo.com/l/?uddg={TARGET}&rut=x",
        f"/l/?uddg={TARGET}",
        f"https://duckduckgo.com/l/?kh=-1&rut=x&uddg={TARGET}",
        f"https://html.duckduckgo.com/l/?uddg={TARGET}",
    ],
)
def test_duckduckgo_redirect_is_decoded_exactly_once_wherever_uddg_sits(href):
    assert unwrap(href) == "https://example.com/a?b=1&c=%20"


def test_duckduckgo_direct_links_stay_and_ad_links_are_dropped():
    assert unwrap("https://example.com/page?q=%20") == "https://example.com/page?q=%20"
    assert unwrap("https://duckduckgo.com/y.js?ad_domain=x.com") is None


@pytest.mark.parametrize(
    "page",
    [
        "duckduckgo_ad_own_class.html",
        "duckduckgo_ad_in_ads_block.html",
        "duckduckgo_ad_badge.html",
        "duckduckgo_ad_link.html",
        "duckduckgo_ad_wrapped_link.html",
    ],
)
def test_every_shape_of_duckduckgo_ad_is_skipped(
    duckduckgo, search, engine_replies, recording, page
):
    """Regression: an ad marked only around it, by its badge, or through a wrapped y.js link
    came back as an organic result."""
    engine_replies.post(URL, body=recording(page))
    output, citations = search(duckduckgo)
    assert [r["url"] for r in output["results"]] == [
        "https://requests.readthedocs.io/en/latest/",
        "https://pypi.org/project/requests/",
    ]
    assert [c.url for c in citations] == [r["url"] for r in output["results"]]


def test_duckduckgo_text_in_angle_brackets_is_kept(
    duckduckgo, search, engine_replies, recording, angle_brackets
):
    """Regression: escaped text that looks like a tag (``std::vector&lt;T,Allocator&gt;``) was
    decoded first and then removed as markup."""
    engine_replies.post(URL, body=recording("duckduckgo_angle_brackets.html"))
    output, _ = search(duckduckgo)
    assert [(r["title"], r["snippet"]) for r in output["results"]] == angle_brackets


def test_duckduckgo_links_back_to_duckduckgo_are_not_results(
    duckduckgo, search, engine_replies, recording
):
    """Regression: a "search instead" entry linking to another DuckDuckGo search, directly or
    through its /l/ redirect, came back as a result."""
    engine_replies.post(URL, body=recording("duckduckgo_internal_links.html"))
    output, citations = search(duckduckgo)
    assert [r["url"] for r in output["results"]] == [
        "https://requests.readthedocs.io/en/latest/",
        "https://pypi.org/project/requests/",
    ]
    assert len(citations) == 2


def test_a_duckduckgo_page_found_by_the_search_is_a_result(duckduckgo, search, engine_replies):
    page = (
        '<html><body><div id="links" class="results"><div class="result">'
        '<a class="result__a" href="https://duckduckgo.com/privacy">Privacy Policy</a>'
        "</div></div></body></html>"
    )
    engine_replies.post(URL, body=page)
    output, _ = search(duckduckgo)
    assert [r["url"] for r in output["results"]] == ["https://duckduckgo.com/privacy"]


@pytest.mark.parametrize(
    "links",
    [
        '<div class="result"><h2><a href="https://example.com/">A renamed title link</a></h2>'
        "</div>",
        '<div class="web-result-v2"><a class="result__a" href="https://example.com/">x</a></div>',
    ],
    ids=["results without title links", "neither results nor the no-results notice"],
)
def test_a_duckduckgo_page_it_cannot_read_is_an_error_not_an_empty_result(
    duckduckgo, search, engine_replies, links
):
    """Regression: after a change of DuckDuckGo's markup every search came back empty, as if
    nothing had been found, instead of failing."""
    engine_replies.post(URL, body=f'<html><body><div id="links" class="results">{links}</div>')
    with pytest.raises(ToolError) as info:
        search(duckduckgo)
    assert info.value.message == "DuckDuckGo returned a response Lookout could not read."
