"""Writes an extracted article's tree as Markdown with html2text, fed the tree's events directly."""

from __future__ import annotations

import re

import html2text
import lxml.etree
from lxml.html import HtmlElement

_WORD = re.compile(r"\w")
# html2text escapes Markdown in a text with four patterns: a backslash before a character Markdown
# reads, and a line opening as a list item or rule would ("1. ", "+ ", "- ", "--"). A text with
# neither has nothing to escape.
_MAY_NEED_ESCAPING = re.compile(r"\\|^\s*(?:\d+\.|[+-])", re.M)
_BLANK_RUNS = re.compile(r"\n{3,}")
# Elements without an end tag: an HTML parser reports only their start.
_VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_EMPHASIS_TAGS = frozenset({"b", "strong", "em", "i", "u", "del", "s", "strike"})


class _Converter(html2text.HTML2Text):
    """html2text, keeping the space that ends the first text inside an emphasis.

    html2text strips the first text inside ``<b>`` or ``<em>`` on both sides and gives the
    space back only before plain text, so words before a link or code ran together:
    ``<b>the <a>Job Board</a></b>`` came out as ``**the[Job Board](...)**``, and the model read
    "theJob" (html2text's issue 403). The space is written before the next tag that opens, or
    after the emphasis when the emphasis closes first.
    """

    _space_owed = False

    def handle_data(self, data: str, entity_char: bool = False) -> None:
        owes = self.stressed and data[-1:].isspace() and not data.isspace()
        super().handle_data(data, entity_char)
        if data:  # html2text ignores empty text, and so does the debt
            self._space_owed = owes

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._space_owed:
            self._space_owed = False
            self.o(" ")
            self.preceding_data = " "
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self._space_owed and tag not in _EMPHASIS_TAGS:
            self._space_owed = False
        super().handle_endtag(tag)


def to_markdown(content: HtmlElement) -> str:
    """Return ``content`` as Markdown: links inline, no wrapping, blank-line runs of one line;
    the empty string when the text holds not a single letter or digit."""
    converter = _Converter()
    converter.body_width = 0
    converter.unicode_snob = True
    converter.ignore_links = False
    converter.ignore_images = False
    _feed_tree(converter, content)
    text = converter.optwrap(converter.finish())
    text = _BLANK_RUNS.sub("\n\n", _strip_line_ends(text)).strip()
    # Text without a single letter or digit (stray brackets, entities) has nothing to read.
    return text if _WORD.search(text) else ""


def _feed_tree(converter: _Converter, content: HtmlElement) -> None:
    # html2text is an HTMLParser: its callbacks take the parsed tree's events directly, which
    # spares writing the tree out as HTML and parsing it again in pure Python (half its time).
    for event, element in lxml.etree.iterwalk(content, events=("start", "end")):
        tag = element.tag
        if event == "start":
            if isinstance(tag, str):
                converter.handle_starttag(tag, list(element.attrib.items()))
                if element.text:
                    _feed_text(converter, element.text)
            continue
        if isinstance(tag, str) and tag not in _VOID_TAGS:
            converter.handle_endtag(tag)
        if element.tail and element is not content:
            _feed_text(converter, element.tail)


def _feed_text(converter: _Converter, text: str) -> None:
    # html2text runs its four escaping patterns over every text, indentation between tags
    # included; one search says whether they could change anything (second flag: "do not
    # escape").
    converter.handle_data(text, _MAY_NEED_ESCAPING.search(text) is None)


def _strip_line_ends(text: str) -> str:
    # Linear on purpose: the regex "[ \t]+$" with re.M retries from every space of a long run
    # that ends in another character, which is quadratic in the run's length.
    return "\n".join(line.rstrip(" \t") for line in text.split("\n"))
