"""Reads class and id names as whole tokens, to tell page furniture from content by name.

Names are split on ``-``, ``_``, spaces and camelCase, and a rule matches a whole token, never
a substring: ``share`` names a sharing bar, while ``shareholder``, ``authority``, ``modalities``
and ``credit-terms`` name nothing of the kind. What follows a taxonomy word in a class is a
slug, the post's subject rather than an element's role: blogs class an article
``entry-category-social_media``, ``tag-advertising`` or ``author-admin``, and none of that makes
the article a social bar or an advert.
"""

from __future__ import annotations

import functools
import re

# Class and id tokens (and token pairs) that name furniture, matched as whole tokens.
_FURNITURE_TOKENS = frozenset(
    {
        "comment",
        "comments",
        "disqus",
        "share",
        "sharing",
        "social",
        "related",
        "recommend",
        "recommended",
        "recommendations",
        "newsletter",
        "subscribe",
        "subscription",
        "signup",
        "promo",
        "cta",
        "advert",
        "advertisement",
        "sponsor",
        "sponsored",
        "cookie",
        "cookies",
        "consent",
        "popup",
        "modal",
        "breadcrumb",
        "breadcrumbs",
        "byline",
        "tags",
        "taglist",
        "tagcloud",
        "outbrain",
        "taboola",
        "toolbar",
        "pagination",
        "pager",
        "ad",
        "ads",
    }
)
# Of those, the tokens that name comments (a forum names its replies so).
_COMMENT_TOKENS = frozenset({"comment", "comments", "disqus"})
_FURNITURE_PAIRS = frozenset(
    {
        ("sr", "only"),
        ("screen", "reader"),
        ("visually", "hidden"),
        ("skip", "link"),
        ("tag", "list"),
        ("tag", "cloud"),
    }
)
# In one class, the tokens after these are a slug (a category, tag or author), not a role.
_TAXONOMY_TOKENS = frozenset({"category", "tag", "author"})
_NAME_SEPARATOR = re.compile(r"[\s_\-]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_MAX_NAME_CHARS = 500
_MAX_ID_WORDS = 3


def name_tokens(names: str) -> list[str]:
    """Return the lower-case tokens of class and id names, split on -, _, spaces and camelCase."""
    # Hostile pages may carry megabytes of class names; the first few hundred characters decide.
    words = _NAME_SEPARATOR.split(names[:_MAX_NAME_CHARS])
    return [part.lower() for word in words for part in _CAMEL_BOUNDARY.split(word) if part]


def names_furniture(classes: str, id: str = "") -> bool:
    """Return whether class or id names name page furniture, by whole tokens (see below)."""
    if not classes and not id:
        return False
    # Pages repeat a few names on thousands of elements; the cut keeps the cache small.
    return _names_furniture(classes[:_MAX_NAME_CHARS], id[:_MAX_NAME_CHARS])


@functools.lru_cache(maxsize=4096)
def _names_furniture(classes: str, id: str) -> bool:
    """Whether names name furniture, by whole tokens.

    An id of more than ``_MAX_ID_WORDS`` words is a heading made into an anchor (Sphinx,
    GitHub and MediaWiki do this), which names the section's subject, not its role:
    ``sharing-with-a-single-developer`` is a chapter, not a sharing bar.
    """
    tokens = _role_tokens(classes, id)
    if any(
        pair in _FURNITURE_PAIRS for word in tokens for pair in zip(word, word[1:], strict=False)
    ):
        return True
    return any(not _FURNITURE_TOKENS.isdisjoint(_without_slug(word)) for word in tokens)


def names_comments(classes: str, id: str = "") -> bool:
    """Return whether class or id names name a comment list or a comment, by whole tokens."""
    tokens = _role_tokens(classes[:_MAX_NAME_CHARS], id[:_MAX_NAME_CHARS])
    return any(not _COMMENT_TOKENS.isdisjoint(_without_slug(word)) for word in tokens)


def _role_tokens(classes: str, id: str) -> list[list[str]]:
    # Each class's tokens, and the id's unless it is a heading's anchor.
    id_tokens = name_tokens(id)
    tokens = [name_tokens(word) for word in classes.split()]
    return tokens if len(id_tokens) > _MAX_ID_WORDS else [*tokens, id_tokens]


def _without_slug(tokens: list[str]) -> list[str]:
    for index, token in enumerate(tokens):
        if token in _TAXONOMY_TOKENS:
            return tokens[: index + 1]
    return tokens
