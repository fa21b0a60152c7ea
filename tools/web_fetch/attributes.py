"""Finds the elements that carry an attribute by stepping to it, not by testing every element.

libxml2 evaluates a predicate such as ``descendant::*[@style]`` once for every element of the
tree, making and freeing a node set each time (about 0.1 µs an element and a test, more than
the rest of the walk). The path ``descendant::*/@style`` is its plain walk, which collects the
attributes themselves, and an attribute's value knows its element. Both are linear: an
attribute step's results are merged without a search for duplicates, while a step back up
(``@style/..``) or a union (``//@a | //@b``) is merged in quadratic time by libxml2.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import lxml.etree
from lxml.html import HtmlElement


@functools.cache
def _path(name: str, test: str, self_too: bool) -> lxml.etree.XPath:
    axis = "descendant-or-self" if self_too else "descendant"
    return lxml.etree.XPath(f"{axis}::*/@{name}{f'[{test}]' if test else ''}")


def carriers(
    root: HtmlElement, name: str, test: str = "", *, self_too: bool = False
) -> list[HtmlElement]:
    """Return the elements under ``root`` (and ``root`` itself with ``self_too``) with the
    attribute ``name``, in document order; with ``test``, an XPath predicate on its value
    (``.``), only those whose value passes it."""
    return [value.getparent() for value in _path(name, test, self_too)(root)]


def in_document_order(root: HtmlElement, found: Iterable[HtmlElement]) -> list[HtmlElement]:
    """Return ``found`` (elements under ``root``, or ``root``) once each, in document order."""
    wanted = set(found)
    if len(wanted) < 2:
        return list(wanted)
    # lxml's iteration by tag skips the other elements in C.
    return [element for element in root.iter(*{e.tag for e in wanted}) if element in wanted]
