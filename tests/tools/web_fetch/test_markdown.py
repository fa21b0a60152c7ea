"""The Markdown that html2text writes from an extracted tree: words stay apart."""

import lxml.html
import pytest

from tools.web_fetch.markdown import to_markdown


def markdown(html: str) -> str:
    return to_markdown(lxml.html.fragment_fromstring(html, create_parent="div"))


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (
            '<p><b>return to the <a href="https://jobs.example/">Job Board</a></b> now</p>',
            "**return to the [Job Board](https://jobs.example/)** now",
        ),
        ("<p><em>call </em><code>run()</code> first</p>", "_call_ `run()` first"),
        (
            '<p><b>See </b><a href="https://jobs.example/">the board</a>.</p>',
            "**See** [the board](https://jobs.example/).",
        ),
        ("<p><b>featuring <i>time</i></b> loops</p>", "**featuring _time_** loops"),
    ],
)
def test_the_space_before_a_link_or_code_inside_emphasis_is_kept(html, expected):
    """html2text strips the first text inside an emphasis and gives the space back only before
    plain text: "**return to the[Job Board](...)**" read as "theJob" (html2text issue 403)."""
    assert markdown(html) == expected


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>the <b>bold </b>text</p>", "the **bold** text"),
        ("<p><b> lead</b> in</p>", "**lead** in"),
        ("<p><b>end </b></p><p>next</p>", "**end**\n\nnext"),
    ],
)
def test_spaces_at_the_edges_of_an_emphasis_stay_outside_its_marks(html, expected):
    assert markdown(html) == expected
