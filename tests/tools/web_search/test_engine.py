"""What adapters share: reading an HTML title or snippet, and wording validation errors."""

from __future__ import annotations

import pytest

from tools.web_search.engine import MAX_FRAGMENT_CHARS, text_from_html, validation_messages


@pytest.mark.parametrize(
    ("fragment", "text"),
    [
        ("<strong>Bold</strong> &amp; <em>plain</em>", "Bold & plain"),
        ("Tom &amp; Jerry&#39;s &quot;show&quot;&mdash;now", 'Tom & Jerry\'s "show"—now'),
        ("std::vector&lt;T,Allocator&gt;", "std::vector<T,Allocator>"),
        ("a literal &lt;b&gt; tag", "a literal <b> tag"),
        ("write &amp;lt;b&amp;gt;", "write &lt;b&gt;"),
        ("1 < 2 and 3 > 2, AT&T", "1 < 2 and 3 > 2, AT&T"),
        ("half a pair \ud83d and <b>the rest</b>", "half a pair   and the rest"),
        ("nul\x00 and\x1b <b>escape</b>", "nul  and  escape"),
        ("no markup at all", "no markup at all"),
        ("", ""),
    ],
)
def test_html_loses_its_tags_before_its_entities_are_decoded(fragment, text):
    """Regression: entities were decoded first, so escaped text that looked like a tag was
    then removed as one."""
    assert text_from_html(fragment) == text


@pytest.mark.parametrize(
    ("fragment", "text"),
    [
        ("std::vector<T,Allocator> and <b>bold</b>", "std::vector<T,Allocator> and bold"),
        ("template <typename T> </Typename>", "template <typename T> </Typename>"),
        ("<P>Para</p><BR/>graph &lt;3", "Paragraph <3"),
        ("a <b>bold</b> claim, <span class='x'>spanned</span>", "a bold claim, spanned"),
    ],
)
def test_a_less_than_sign_opening_no_html_element_is_text(fragment, text):
    """Issue 24: one rule for every engine's text, whether it sends HTML or plain text."""
    assert text_from_html(fragment) == text


def test_only_the_start_of_a_huge_fragment_is_read():
    assert text_from_html("<b>x</b>" * 100_000) == "x" * (MAX_FRAGMENT_CHARS // len("<b>x</b>"))


def test_broken_markup_is_read_like_a_browser_would_without_raising():
    """Regression: the standard library's tokenizer raised AssertionError on ``<![<![`` and
    took quadratic time on a run of unclosed tags."""
    assert text_from_html("kept <![<![ a bogus comment to the end") == "kept "
    assert text_from_html("kept <a <a <a " * 20_000) == "kept "


def test_validation_entries_say_where_each_problem_is():
    entries = [
        {"loc": ["query", "count"], "msg": "Input should be less than or equal to 20"},
        {"loc": ["header", "x-subscription-token"], "msg": "Field required"},
        {"loc": ["body", "include_domains", 3], "msg": "String too long"},
        {"loc": [], "msg": "Something else"},
        {"msg": ""},
        "not an entry",
    ]
    assert validation_messages(entries) == (
        "Input should be less than or equal to 20 (query parameter count); "
        "Field required (header x-subscription-token); "
        "String too long (body field include_domains.3); Something else"
    )
    assert validation_messages([]) is None and validation_messages("x") is None
