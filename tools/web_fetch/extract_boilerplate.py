"""Removes page furniture (forms, asides, sharing, comments, link lists) before readability runs.

Every rule is structural, the same on every site: readability then scores a smaller tree, which
is both faster and less likely to keep furniture that sits inside the article's container.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

# Controls, pictures and embedded media, never the article's prose.
_CONTROL_TAGS = (
    "img",
    "picture",
    "button",
    "select",
    "textarea",
    "input",
    "label",
    "svg",
    "canvas",
    "video",
    "audio",
    "object",
    "embed",
    "dialog",
    "menu",
    "figcaption",
)
_CONTROLS_XPATH = " | ".join(f"descendant::{tag}" for tag in _CONTROL_TAGS)
# Side matter, unless it wraps most of the page (some sites put the whole page in one form).
_SIDE_XPATH = "descendant::aside | descendant::form"
# Class and id words that name furniture, matched at the start of a word of the attribute.
_FURNITURE_NAMES = re.compile(
    r"(?:^|[\s_-])(?:"
    r"comment|disqus|share|sharing|social|related|recommend|newsletter|subscri|signup|"
    r"promo|advert|sponsor|cookie|consent|popup|modal|breadcrumb|byline|author|caption|"
    r"credit|tags|taglist|tag-list|tagcloud|outbrain|taboola|toolbar|pagination|pager|"
    r"sr-only|screen-reader|visually-hidden|skip-link|ads?(?=$|[\s_-])"
    r")",
    re.I,
)
_KEPT_TAGS = frozenset({"html", "body", "main", "article"})
# A named block holding more than this share of the body's text is the content, whatever its name.
_MAX_SHARE_OF_BODY = 0.4
# Blocks whose text is mostly link text are menus, link lists and teasers.
_LINK_LIST_TAGS = ("p", "ul", "ol", "dl", "table", "div", "section")
_LINK_LISTS_XPATH = " | ".join(f"descendant::{tag}[descendant::a]" for tag in _LINK_LIST_TAGS)
_MAX_LINK_DENSITY = 0.6
_MIN_LINK_LIST_CHARS = 30


def remove_boilerplate(body: HtmlElement) -> None:
    """Remove from ``body`` the controls, side matter and link lists that are not content."""
    for element in body.xpath(_CONTROLS_XPATH):
        _drop(element)
    # Links left without text once their pictures are gone would read as "[](url)".
    for link in body.xpath("descendant::a[not(normalize-space())]"):
        _drop(link)
    body_chars = len(body.text_content())
    for element in body.xpath(_SIDE_XPATH):
        if _share(element, body_chars) <= _MAX_SHARE_OF_BODY:
            _drop(element)
    dropped: set[HtmlElement] = set()
    for element in body.xpath("descendant::*[@class or @id]"):
        names = f"{element.get('class', '')} {element.get('id', '')}"
        if (
            _FURNITURE_NAMES.search(names)
            and element.tag not in _KEPT_TAGS
            and dropped.isdisjoint(element.iterancestors())
            and _share(element, body_chars) <= _MAX_SHARE_OF_BODY
        ):
            dropped.add(element)
            _drop(element)
    # Innermost first, so a container's density is judged after its menus are gone.
    for element in reversed(body.xpath(_LINK_LISTS_XPATH)):
        if _is_link_list(element) and _share(element, body_chars) <= _MAX_SHARE_OF_BODY:
            _drop(element)


def _share(element: HtmlElement, body_chars: int) -> float:
    return len(element.text_content()) / body_chars if body_chars else 0.0


def _is_link_list(element: HtmlElement) -> bool:
    text = " ".join(element.text_content().split())
    # A paragraph that is all link ("Read more: ...") is a teaser whatever its length.
    if element.tag != "p" and len(text) < _MIN_LINK_LIST_CHARS:
        return False
    linked = sum(len(" ".join(a.text_content().split())) for a in element.iter("a"))
    return linked > _MAX_LINK_DENSITY * len(text)


def _drop(element: HtmlElement) -> None:
    if element.getparent() is not None:
        element.drop_tree()
