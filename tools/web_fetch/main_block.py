"""Finds a page's main text block by text density, so that no later rule can remove it.

One pass over the tree counts, for every element, its visible characters and how many of them
are link text. The main block is found by walking down from the body while one child holds
most of the current element's prose (text that is not link text): where the prose splits
among several children, the walk stops, and that element is the block. The block, every
element holding a large share of the body's text, and all their ancestors are protected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lxml.html import HtmlElement

# A child holding this share of its parent's prose is where the prose is. At 0.5 the shared set
# gains 0.009 F1, but the walk goes down into one long answer of a Q&A page or past a wiki's
# infobox, and those are then lost (docs/benchmarks.md).
_DESCEND_SHARE = 0.7
# An element holding at least this share of the body's text is content, whatever its name.
PROTECTED_SHARE = 0.4
# Scripts written without spaces between words (Han, kana, Thai, Lao, Myanmar, Khmer): each
# letter counts as a word, so that a Chinese article is not taken for a few words.
UNSPACED_LETTER = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3041-\u3096\u30a1-\u30fa"
    "\u0e01-\u0e30\u0e81-\u0eb0\u1000-\u102a\u1780-\u17b3]"
)


@dataclass(frozen=True)
class TextSizes:
    """Visible characters (surrounding whitespace aside) and link characters under each element."""

    total: dict[HtmlElement, int]
    linked: dict[HtmlElement, int]

    def prose(self, element: HtmlElement) -> int:
        """Return the characters under ``element`` that are not link text."""
        return self.total.get(element, 0) - self.linked.get(element, 0)


def measure(
    root: HtmlElement, discard: Callable[[HtmlElement, int, int], bool] | None = None
) -> TextSizes:
    """Return the text sizes of ``root`` and every element under it, in one pass.

    With ``discard``, an element for which ``discard(element, chars, link_chars)`` is true is
    removed (its tail stays) and counts for nothing in its ancestors' sizes.
    """
    total: dict[HtmlElement, int] = {}
    linked: dict[HtmlElement, int] = {}
    # Reversed document order visits every element after all of its descendants, each of which
    # has added its size and its tail to it by then (a removed one's tail joins a sibling's
    # tail or its parent's text, both read later). Texts count without the whitespace around
    # them: indentation between tags counts for nothing.
    for element in reversed(list(root.iter())):
        tag = element.tag
        text = element.text if isinstance(tag, str) else None
        size = total.get(element, 0) + (len(text.strip()) if text else 0)
        links = size if tag == "a" else linked.get(element, 0)
        if element is root:
            total[element], linked[element] = size, links
        elif discard is not None and discard(element, size, links):
            element.drop_tree()
            total.pop(element, None)
            linked.pop(element, None)
        else:
            total[element], linked[element] = size, links
            parent = element.getparent()
            tail = element.tail
            total[parent] = total.get(parent, 0) + size + (len(tail.strip()) if tail else 0)
            if links:
                linked[parent] = linked.get(parent, 0) + links
    return TextSizes(total, linked)


def word_count(element: HtmlElement) -> int:
    """Return the words of ``element``'s text: runs between spaces, and in scripts written
    without spaces, letters."""
    text = element.text_content()
    words = len(text.split())
    return words if text.isascii() else words + len(UNSPACED_LETTER.findall(text))


def find_main_block(body: HtmlElement, sizes: TextSizes, links: bool = False) -> HtmlElement:
    """Return the element under ``body`` (or ``body`` itself) that holds the page's prose
    (with ``links``, its text, link text included)."""
    size = (lambda element: sizes.total.get(element, 0)) if links else sizes.prose
    current = body
    while True:
        children = [child for child in current if isinstance(child.tag, str)]
        if not children:
            return current
        best = max(children, key=size)
        if size(best) == 0 or size(best) < _DESCEND_SHARE * size(current):
            return current
        current = best


def protected_elements(body: HtmlElement, main: HtmlElement, sizes: TextSizes) -> set[HtmlElement]:
    """Return the elements no pruning may remove: ``main``, large blocks and their ancestors."""
    protected = {main, *main.iterancestors()}
    floor = PROTECTED_SHARE * sizes.total.get(body, 0)
    if floor > 0:
        protected.update(e for e in body.iter() if sizes.total.get(e, 0) >= floor)
    return protected
