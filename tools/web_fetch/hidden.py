"""Finds the elements a page hides from its readers, except the full text a visible teaser opens.

Hidden elements (the ``hidden`` attribute, ``aria-hidden="true"``, an inline ``display: none``
or ``visibility: hidden``) are not read: hidden text is where injected instructions hide.
One kind is read: the rest of a text cut short. A "read more" expander shows the first words of
a review or a description, ending in an ellipsis, and keeps the whole text hidden until a
click; the reader who clicks sees it, and it is the page's content. A hidden element is read in
place of a visible teaser when it holds the teaser's words and goes on where the teaser
stopped (the same words followed by an ellipsis are a copy of the teaser, not its rest); the
teaser's words are then dropped, so the text is read once.
"""

from __future__ import annotations

import re

from lxml.etree import _ElementUnicodeResult as TextNode  # a string that knows its element
from lxml.html import HtmlElement

from tools.web_fetch.attributes import carriers, in_document_order

_HIDING_ATTRIBUTES = ("hidden", "aria-hidden", "style")
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
# A teaser: a run of the body's text ending in an ellipsis ("...", "…", WordPress's "[…]").
_ELLIPSIS_XPATH = "//body//text()[contains(., '...') or contains(., '…')]"
# The body's whole text holds an ellipsis wherever one of its runs does: it is written out once
# and searched, where the runs' search above tests each run (a page may hold none at all).
_ELLIPSES = ("...", "…")
# Fewer words than this before the ellipsis are a title cut short, not the start of a text.
_TEASER_MIN_WORDS = 8
# Teasers looked at, at most, in page order: each costs a search of the hidden text.
_MAX_TEASERS = 20
_MAX_LOOKED_AT = 5 * _MAX_TEASERS
# A hidden text longer than this is not the rest of a teaser (a long article is 60,000).
_MAX_FULL_TEXT_CHARS = 200_000
# Hidden elements inside an opened one are looked into this many at most: the few wrappers
# between it and the text. The others stay hidden.
_MAX_NESTED = 8


def hidden_elements(root: HtmlElement) -> list[HtmlElement]:
    """Return the page's hidden elements in document order, minus those read for a teaser.

    The teasers whose full text is read lose their words, in ``root``.
    """
    hidden = _hidden_in(root)
    teasers = _teasers(root, set(hidden)) if hidden and _has_ellipsis(root) else []
    if not teasers:
        return hidden
    outermost = _outermost(hidden)
    texts = {element: _words(element) for element in outermost}
    opened: set[HtmlElement] = set()
    for node, words in teasers:
        for element in outermost:
            if element not in opened and _completes(texts[element], words):
                opened.add(element)
                opened.update(_inner_holding(element, words, hidden))
                _drop_text(node)
                break
    return [element for element in hidden if element not in opened]


def _hidden_in(root: HtmlElement) -> list[HtmlElement]:
    # The carriers of each hiding attribute, in document order; merged into that order only
    # when more than one attribute hides something.
    kinds = [
        hidden
        for name in _HIDING_ATTRIBUTES
        if (hidden := [element for element in carriers(root, name) if _is_hidden(element)])
    ]
    if len(kinds) < 2:
        return kinds[0] if kinds else []
    return in_document_order(root, (element for hidden in kinds for element in hidden))


def _has_ellipsis(root: HtmlElement) -> bool:
    for body in root.iter("body"):
        text = body.text_content()
        if any(ellipsis in text for ellipsis in _ELLIPSES):
            return True
    return False


def _is_hidden(element: HtmlElement) -> bool:
    attrib = element.attrib
    if "hidden" in attrib:
        return True
    if attrib.get("aria-hidden", "").strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(attrib.get("style", "")))


def _teasers(root: HtmlElement, hidden: set[HtmlElement]) -> list[tuple[TextNode, str]]:
    # The visible runs of text that end in an ellipsis after a sentence's worth of words,
    # each with its words (spaces made single, the ellipsis cut off); the first few only.
    found = []
    looked_at = 0
    for node in root.xpath(_ELLIPSIS_XPATH):
        words = _teaser_words(node)
        if words is None:
            continue
        if _is_visible(node, hidden):
            found.append((node, words))
        looked_at += 1
        if len(found) == _MAX_TEASERS or looked_at == _MAX_LOOKED_AT:
            break
    return found


def _teaser_words(text: str) -> str | None:
    # String methods, not a pattern: a pattern anchored at the end rescans a long space run.
    text = text.rstrip()
    text = text[:-1].rstrip() if text.endswith("]") else text
    if not text.endswith(("...", "…")):
        return None
    text = text.rstrip(".…").rstrip()
    words = (text[:-1] if text.endswith("[") else text).split()
    return " ".join(words) if len(words) >= _TEASER_MIN_WORDS else None


def _is_visible(node: TextNode, hidden: set[HtmlElement]) -> bool:
    # A tail is text of its element's parent, shown even where that element is hidden.
    holder = node.getparent() if node.is_text else node.getparent().getparent()
    return holder is not None and not any(
        element in hidden for element in (holder, *holder.iterancestors())
    )


def _outermost(hidden: list[HtmlElement]) -> list[HtmlElement]:
    covered: set[HtmlElement] = set()
    outermost = []
    for element in hidden:
        if element not in covered:
            outermost.append(element)
            covered.update(element.iter())
    return outermost


def _words(element: HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _completes(text: str, words: str) -> bool:
    # The teaser's words go on in the hidden text. Followed by an ellipsis they are the teaser
    # again (a copy in hidden metadata, a comment's edit box), not the rest of it.
    if len(text) > _MAX_FULL_TEXT_CHARS:
        return False
    start = text.find(words)
    while start != -1:
        end = start + len(words)
        after = text[end : end + 8].lstrip(" [")
        if after and not after.startswith(("...", "…")):
            return True
        start = text.find(words, end)
    return False


def _inner_holding(
    element: HtmlElement, words: str, hidden: list[HtmlElement]
) -> list[HtmlElement]:
    # Hidden wrappers inside the opened element that hold the text are opened with it.
    # They follow it in document order.
    inner = []
    for other in hidden[hidden.index(element) + 1 :]:
        if len(inner) == _MAX_NESTED or element not in other.iterancestors():
            break
        inner.append(other)
    return [other for other in inner if words in _words(other)]


def _drop_text(node: TextNode) -> None:
    if node.is_text:
        node.getparent().text = None
    else:
        node.getparent().tail = None
