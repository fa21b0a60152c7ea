"""What a page says of itself: that it is an article, where its article's body is, its recipe.

Pages declare these for search engines and readers' apps: Open Graph's ``og:type``,
schema.org's ``itemtype`` and ``itemprop``, microformats' classes (hAtom's ``entry-content``,
hRecipe's ``hrecipe``, microformats2' ``e-content`` and ``h-recipe``). A declaration is read
only where the page makes one, once: two article bodies, or two recipes (a round-up of ten),
say nothing about which is the page's own.

readability works on a copy of the tree; a declared element (and, where it matters, everything
inside it) carries a mark whose value is random, so that a page cannot forge one, and the copy
of readability's choice shows whether it holds the element, or only a part of it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from lxml.html import HtmlElement

from tools.web_fetch.attributes import carriers
from tools.web_fetch.main_block import word_count

# The elements whose attributes may declare a body or a recipe, found by their attributes
# (``attributes``), then judged by whole names.
_BODY_ATTRIBUTES = (("itemprop", ". = 'articleBody'"), ("class", "contains(., 'content')"))
_BODY_CLASSES = frozenset({"entry-content", "e-content"})
_RECIPE_ATTRIBUTES = (("itemtype", "contains(., 'Recipe')"), ("class", "contains(., 'recipe')"))
_RECIPE_TYPE = "recipe"
_RECIPE_CLASSES = frozenset({"hrecipe", "h-recipe"})
_ARTICLE_TYPES = frozenset({"article", "newsarticle", "blogposting", "reportagenewsarticle"})
_MARK = "data-lookout-declared"
_PART = "-part"


@dataclass(frozen=True)
class Declared:
    """An element the page declares, marked (with all it holds) to be found in copies."""

    element: HtmlElement
    token: str

    @classmethod
    def mark(cls, element: HtmlElement, *, parts: bool = False) -> Declared:
        """Mark ``element`` with a new random token, and with ``parts`` all it holds too (a
        few milliseconds on a long body: only what asks ``part_held_by`` pays for them)."""
        token = secrets.token_hex(8)
        element.set(_MARK, token)
        if parts:
            for descendant in element.iterdescendants():
                if isinstance(descendant.tag, str):
                    descendant.set(_MARK, token + _PART)
        return cls(element, token)

    def held_by(self, content: HtmlElement | None) -> bool:
        """Whether ``content`` (or a copy of it) holds the whole declared element."""
        return content is not None and self.token in _marks(content)

    def part_held_by(self, content: HtmlElement | None) -> bool:
        """Whether ``content`` holds some part of the element, but not the whole of it."""
        return content is not None and self.token + _PART in _marks(content)


def _marks(content: HtmlElement) -> set[str]:
    return set(content.xpath(f"descendant-or-self::*/@{_MARK}"))


def declares_article(root: HtmlElement) -> bool:
    """Whether the page says it is an article (``og:type``, or a schema.org article type)."""
    og_type = root.xpath("string(descendant::meta[@property='og:type']/@content)").strip().lower()
    if og_type == "article":
        return True
    return any(
        not _ARTICLE_TYPES.isdisjoint(_schema_types(itemtype))
        for itemtype in root.xpath("//@itemtype")
    )


def declared_body(body: HtmlElement, min_words: int) -> HtmlElement | None:
    """Return the one element the page names as its article's body, if it has that many words."""
    return _only(
        [
            element
            for element in _maybe(body, _BODY_ATTRIBUTES)
            if element.get("itemprop") == "articleBody"
            or not _BODY_CLASSES.isdisjoint(element.get("class", "").split())
        ],
        min_words,
    )


def declared_recipe(body: HtmlElement, min_words: int) -> HtmlElement | None:
    """Return the one element the page names as a recipe, if it has that many words."""
    return _only(
        [
            element
            for element in _maybe(body, _RECIPE_ATTRIBUTES)
            if _RECIPE_TYPE in _schema_types(element.get("itemtype", ""))
            or not _RECIPE_CLASSES.isdisjoint(element.get("class", "").split())
        ],
        min_words,
    )


def parts_of(declared: HtmlElement) -> list[HtmlElement]:
    """Return the declared body with its sibling parts, in order.

    A body cut in parts around a side rail names only its first part; the others are its
    siblings of the same tag and class (``article_body entry-content``, ``article_body``).
    """
    parent = declared.getparent()
    classes = set(declared.get("class", "").split())
    if parent is None or not classes:
        return [declared]
    return [
        sibling
        for sibling in parent
        if sibling is declared
        or sibling.tag == declared.tag
        and not classes.isdisjoint(sibling.get("class", "").split())
    ]


def _maybe(body: HtmlElement, attributes: tuple[tuple[str, str], ...]) -> list[HtmlElement]:
    # Each element once (one may carry both attributes); their order is not read (``_only``).
    return list(dict.fromkeys(e for name, test in attributes for e in carriers(body, name, test)))


def _only(found: list[HtmlElement], min_words: int) -> HtmlElement | None:
    if len(found) != 1 or word_count(found[0]) < min_words:
        return None
    return found[0]


def _schema_types(itemtype: str) -> set[str]:
    # "https://schema.org/NewsArticle" names newsarticle; an itemtype may list several types.
    return {url.rstrip("/").rsplit("/", 1)[-1].lower() for url in itemtype.split()}
