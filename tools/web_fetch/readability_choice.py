"""Asks readability-lxml which part of an already cleaned and pruned page is the article.

readability is one candidate, not the verdict (``extract`` checks its choice against the main
text block). This subclass scores text alone, keeps what the pruning marked as the article's
own, reads a table's rows and a chapter's sections as parts of a whole, judges a paragraph
beside its choice by all its text (not the text before its first child), measures text without
readability's per-call regex chain (which made its time grow with the square of a page's
nesting), finds the ``<div>`` elements it reads as paragraphs without writing every ``<div>``'s
children out as HTML, and hands its choice over as a tree rather than as HTML to parse again.
"""

from __future__ import annotations

import copy
import logging
import re

import lxml.html
from lxml.etree import tostring, tounicode
from lxml.html import HtmlElement
from readability import Document
from readability.readability import REGEXES

from tools.web_fetch.attributes import carriers

log = logging.getLogger(__name__)

_KEEP_MARK = "data-lookout-own"
_ROW_GROUPS = frozenset({"tbody", "thead", "tfoot"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SCORED_TAGS = ("p", "pre", "td", "blockquote")
# readability's bar for a sibling of its choice: a fifth of the choice's score, at least 10;
# and its test of a sibling paragraph: over 80 characters with under a quarter of them link
# text, or shorter with no link and a sentence's full stop.
_SIBLING_SHARE = 0.2
_MIN_SIBLING_SCORE = 10
_SHORT_PARAGRAPH = 80
_MAX_PARAGRAPH_LINK_DENSITY = 0.25
_SENTENCE = re.compile(r"\.( |$)")
_BLOCKS = frozenset({*_HEADINGS, "ul", "ol", "dl", "table", "pre", "blockquote", "figure"})
# readability reads a <div> as a paragraph when its children, written out, open no block: this
# pattern finds none in them. An element of one of these tags in a <div> opens one for sure.
_OPENS_BLOCK = REGEXES["divToPElementsRe"]
_BLOCK_TAGS = ("blockquote", "dl", "div", "img", "ol", "p", "pre", "table", "ul")
# readability's inline elements, which it gathers into a paragraph of their own in a <div>.
_INLINE_TAGS = frozenset(
    {"a", "b", "cite", "code", "em", "font", "i", "small", "span", "strong", "sub", "sup", "u"}
)


def readability_choice(root: HtmlElement, keep: list[HtmlElement]) -> HtmlElement | None:
    """Return readability's article for ``root`` as a ``<div>``, or None when it finds none.

    ``keep`` are elements readability's last cleaning must not drop (the main block's tables,
    figures, asides and headers). ``root`` is left as it was, apart from those marks.
    """
    # A page's own marks are erased.
    for element in carriers(root, _KEEP_MARK, self_too=True):
        del element.attrib[_KEEP_MARK]
    for element in keep:
        element.set(_KEEP_MARK, "")
    try:
        chosen = _PrunedDocument(root, retry_length=0).summary(html_partial=True).element
    except Exception:  # readability wraps any failure in Unparseable; the caller falls back
        log.debug("readability found no article", exc_info=True)
        return None
    # With no candidate at all readability hands back the whole document, head and all.
    return None if chosen.tag == "html" else chosen


def _opens_with_heading(element: HtmlElement) -> bool:
    first = next((child for child in element if isinstance(child.tag, str)), None)
    return first is not None and first.tag in _HEADINGS


def _headed_siblings(parent: HtmlElement, tag: str) -> int:
    return sum(1 for child in parent if child.tag == tag and _opens_with_heading(child))


def _children_open_block(div: HtmlElement) -> bool:
    # readability's own test, on the bytes' repr as it has it.
    return (
        _OPENS_BLOCK.search(str(b"".join(tostring(child, encoding="utf-8") for child in div)))
        is not None
    )


def _wrap_loose_text(div: HtmlElement) -> None:
    # readability's second step, as it has it: a <div>'s own text, each run of inline children
    # and each child's tail become paragraphs of their own; <br> goes.
    children = list(div)
    paragraph = None
    if div.text and div.text.strip():
        paragraph = lxml.html.Element("p")
        paragraph.text = div.text
        div.text = None
        div.insert(0, paragraph)
    for child in children:
        if child.tag == "br":
            paragraph = None
            continue
        if child.tag not in _INLINE_TAGS or _inline_opens_block(child):
            paragraph = None
            continue
        if paragraph is None:
            paragraph = lxml.html.Element("p")
            child.addprevious(paragraph)
        paragraph.append(child)
    for position, child in reversed(list(enumerate(div))):
        if child.tail and child.tail.strip():
            tail = lxml.html.Element("p")
            tail.text = child.tail
            child.tail = None
            div.insert(position + 1, tail)
        if child.tag == "br":
            child.drop_tree()


def _inline_opens_block(child: HtmlElement) -> bool:
    # readability's test, written out as HTML. An inline element with no children and no "<"
    # in its attributes writes out as its own tag, which opens no block, and text and tail
    # with "<" escaped: the pattern cannot match, and it is not written out (most are links).
    if len(child) == 0 and not any("<" in name or "<" in value for name, value in child.items()):
        return False
    return _OPENS_BLOCK.search(tounicode(child, method="html")) is not None


def text_length(element: HtmlElement) -> int:
    """Return the length of ``element``'s text with each run of whitespace counted as one."""
    words = element.text_content().split()
    return sum(map(len, words)) + len(words) - 1 if words else 0


class _Article(str):
    """readability's summary as the tree it chose; the string is the tree's text."""

    element: HtmlElement


class _PrunedDocument(Document):
    """readability's Document for a tree that ``extract`` has already cleaned and pruned."""

    def _parse(self, input: HtmlElement) -> HtmlElement:
        # readability would clean again (a deep copy and a pass over every link of the page);
        # the copy is still needed: a pass that finds no candidate starts from the tree again.
        self.encoding = "utf-8"
        return copy.deepcopy(input)

    def get_clean_html(self) -> _Article:
        # readability writes its choice out as HTML, which would be parsed straight back; the
        # tree is handed over instead (readability names this method as the one to override).
        # Its second, less ruthless pass is off (retry_length=0): it differs from the first only
        # in a removal by names this subclass does not make.
        article = _Article(self.html.text_content())
        article.element = self.html
        return article

    def class_weight(self, e: HtmlElement) -> int:
        # readability weighs class and id names by substring ("related-work-and-prior-art" and
        # "media-body" count against, "shareholder" would too); the pruning has already judged
        # names by whole tokens, so readability scores the text alone.
        return 0

    def remove_unlikely_candidates(self) -> None:
        # readability drops blocks whose class or id merely contains "foot", "comment" or
        # "header" ("footnotes", "commentary-on-the-case"); the pruning has judged names already.
        return None

    def transform_misused_divs_into_paragraphs(self) -> None:
        # readability wrote out every <div>'s children as HTML to search them for a block's
        # opening tag: each <div> of a nesting again, a tenth of a long page's extraction. A
        # <div> holding an element of a block tag is left as it is without that; only the
        # others are written out and searched, as readability does, so that any other markup
        # the pattern matches (a custom element, a tag or attribute name holding "<p") counts
        # as before. Those others hold no <div>: together they are written out at most once.
        holds_block: set[HtmlElement] = set()
        for element in self.html.iter(_BLOCK_TAGS):
            for ancestor in element.iterancestors():
                if ancestor in holds_block:
                    break
                holds_block.add(ancestor)
        for div in self.tags(self.html, "div"):
            if div not in holds_block and not _children_open_block(div):
                div.tag = "p"
        for div in self.tags(self.html, "div"):
            _wrap_loose_text(div)

    def score_paragraphs(self) -> dict[HtmlElement, dict]:
        # readability's scoring, with its text measured once per paragraph without its regex
        # chain (a layout table's cell holds the nested tables' text too, so the chain ran over
        # the page again and again): each paragraph, cell, quote or code block of some length
        # scores its parent fully and its grandparent by half, for its length and its commas;
        # each candidate is then scaled down by its share of link text.
        candidates: dict[HtmlElement, dict] = {}
        for element in self.tags(self._html(), *_SCORED_TAGS):
            parent = element.getparent()
            if parent is None:
                continue
            text = " ".join(element.text_content().split())
            if len(text) < self.min_text_length:
                continue
            # readability's points: one, one per comma-separated part, one per 100 characters
            # up to three.
            score = 1 + (text.count(",") + 1) + min(len(text) / 100, 3)
            grandparent = parent.getparent()
            for ancestor, share in ((parent, 1.0), (grandparent, 0.5)):
                if ancestor is None:
                    continue
                if ancestor not in candidates:
                    candidates[ancestor] = self.score_node(ancestor)
                candidates[ancestor]["content_score"] += score * share
        # A link inside nested candidates (a cell, its row, its table) is measured once.
        link_lengths: dict[HtmlElement, int] = {}
        for element, candidate in candidates.items():
            candidate["content_score"] *= 1 - self.get_link_density(element, link_lengths)
        return candidates

    def select_best_candidate(self, candidates: dict) -> dict | None:
        # readability's choice is one block; two kinds of block are parts of a larger one. A
        # table's row group (readability scores cells like paragraphs, so a long data table's
        # rows can win) stands for its table, so that the caption and the paragraphs around
        # it are judged as its neighbours; and a section opening with a heading, among sibling
        # sections that do too, stands for the document they make up (a manual's chapters).
        best = super().select_best_candidate(candidates)
        if best is None:
            return None
        chosen = best["elem"]
        parent = chosen.getparent()
        if parent is None:
            return best
        row_group = chosen.tag in _ROW_GROUPS and parent.tag == "table"
        section = _opens_with_heading(chosen) and _headed_siblings(parent, chosen.tag) >= 2
        if not (row_group or section):
            return best
        candidate = candidates.setdefault(parent, {"content_score": 0.0, "elem": parent})
        candidate["content_score"] = max(candidate["content_score"], best["content_score"])
        return candidate

    def get_article(
        self, candidates: dict, best_candidate: dict, html_partial: bool = False
    ) -> HtmlElement:
        # readability reads a paragraph beside its choice by the text before its first child,
        # so one that opens in bold or with a link ("<p>The <b>Lookout</b> is ...", the first
        # paragraph of every Wikipedia article) reads as empty and is left out. Read whole by
        # readability's own test, such a paragraph gets the score readability appends at.
        best = best_candidate["elem"]
        parent = best.getparent()
        if parent is None:
            return super().get_article(candidates, best_candidate, html_partial)
        threshold = max(_MIN_SIBLING_SCORE, best_candidate["content_score"] * _SIBLING_SHARE)
        for sibling in parent:
            scored = candidates.get(sibling, {}).get("content_score", 0)
            if sibling.tag == "p" and scored < threshold and self._is_paragraph(sibling):
                candidates[sibling] = {"content_score": threshold, "elem": sibling}
        return super().get_article(candidates, best_candidate, html_partial)

    def _is_paragraph(self, element: HtmlElement) -> bool:
        # readability's test of a sibling paragraph, on its whole text: long with little link
        # text, or short with none; and, as it never asks, prose: a sentence in it and no
        # heading or other block inside (readability makes a <p> of any <div> without a
        # paragraph, a printed page's masthead too).
        if any(isinstance(child.tag, str) and child.tag in _BLOCKS for child in element.iter()):
            return False
        text = " ".join(element.text_content().split())
        if _SENTENCE.search(text) is None:
            return False
        density = self.get_link_density(element)
        if len(text) > _SHORT_PARAGRAPH:
            return density < _MAX_PARAGRAPH_LINK_DENSITY
        return density == 0

    def get_link_density(
        self, elem: HtmlElement, link_lengths: dict[HtmlElement, int] | None = None
    ) -> float:
        # readability measures each candidate's text and each of its links' with a chain of
        # regexes: most of its time on long pages. The share is the same with whitespace
        # runs counted as one. ``link_lengths`` keeps links' lengths while the tree stands.
        lengths = {} if link_lengths is None else link_lengths
        links = 0
        for link in elem.iterdescendants("a"):
            length = lengths.get(link)
            if length is None:
                length = lengths[link] = text_length(link)
            links += length
        return links / max(text_length(elem), 1)

    def get_preserved_elements(self, node: HtmlElement) -> dict[HtmlElement, bool]:
        preserved = super().get_preserved_elements(node)
        preserved.update((element, True) for element in carriers(node, _KEEP_MARK))
        return preserved

    def is_quote_lead(self, elem: HtmlElement) -> bool:
        # A lead-in ending in a colon before a quote stays. readability cleans the whole text
        # of every ancestor before looking at its last character; looking first is enough.
        for lead in (elem, *elem.iterancestors()):
            following = lead.getnext()
            if following is None or following.find(".//blockquote") is None:
                continue
            if lead.text_content().rstrip().endswith(":") and (
                text_length(lead) >= self.min_text_length
            ):
                return True
        return False
