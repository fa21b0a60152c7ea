"""Bounds on a parsed page before extraction walks it: attribute sizes and the element count.

Every later stage (hidden-element checks, class-name rules, readability, html2text) costs time
per element and per character of the attributes it reads, so a hostile page could make each
of them run for seconds. lxml already stops nesting at 256 levels; this caps the rest.
"""

from __future__ import annotations

from itertools import islice

import lxml.etree
from lxml.html import HtmlElement

MAX_ATTRIBUTE_CHARS = 4096
MAX_ELEMENTS = 100_000
CUT_NOTE = "[Lookout read the first {n:,} elements of this page; the rest was left out.]"
# Every element's attributes, stepped to rather than tested for (``attributes``): ``//@*`` would
# step through every text node too.
_LONG_ATTRIBUTES = lxml.etree.XPath(
    f"descendant-or-self::*/@*[string-length(.) > {MAX_ATTRIBUTE_CHARS}]"
)


def bound_tree(root: HtmlElement) -> None:
    """Drop overlong attributes and every element past ``MAX_ELEMENTS``, in place."""
    _drop_long_attributes(root)
    if root.xpath("count(//*)") > MAX_ELEMENTS:
        _cut_after(root, MAX_ELEMENTS)


def _drop_long_attributes(root: HtmlElement) -> None:
    for attribute in _LONG_ATTRIBUTES(root):
        element = attribute.getparent()
        if element is None or attribute.attrname not in element.attrib:
            continue
        if attribute.attrname == "style" and element is not root:
            # A style that long can hide "display:none" anywhere in it: read it as hidden.
            element.drop_tree()
        else:
            del element.attrib[attribute.attrname]


def _cut_after(root: HtmlElement, count: int) -> None:
    last = next(islice(root.iter(), count - 1, None))
    node: HtmlElement | None = last
    while node is not None and node is not root:
        for later in list(node.itersiblings()):
            later.drop_tree()
        node = node.getparent()
    for child in list(last):
        child.drop_tree()
    body = root.find("body")
    if body is not None:
        note = body.makeelement("p", {})
        note.text = CUT_NOTE.format(n=count)
        body.append(note)
