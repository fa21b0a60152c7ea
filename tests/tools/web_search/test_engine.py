"""What adapters share: reading a title or snippet sent as HTML."""

from __future__ import annotations

import pytest

from tools.web_search.engine import text_from_html


@pytest.mark.parametrize(
    ("fragment", "text"),
    [
        ("<strong>Bold</strong> &amp; <em>plain</em>", "Bold & plain"),
        ("Tom &amp; Jerry&#39;s &quot;show&quot;&mdash;now", 'Tom & Jerry\'s "show"—now'),
        ("std::vector&lt;T,Allocator&gt;", "std::vector<T,Allocator>"),
        ("a literal &lt;b&gt; tag", "a literal <b> tag"),
        ("write &amp;lt;b&amp;gt;", "write &lt;b&gt;"),
        ("1 < 2 and 3 > 2, AT&T", "1 < 2 and 3 > 2, AT&T"),
        ("half a pair \ud83d and <b>the rest</b>", "half a pair \ud83d and the rest"),
        ("no markup at all", "no markup at all"),
        ("", ""),
    ],
)
def test_html_loses_its_tags_before_its_entities_are_decoded(fragment, text):
    """Regression: entities were decoded first, so escaped text that looked like a tag was
    then removed as one."""
    assert text_from_html(fragment) == text
