"""Chooses the pictures of the kept content that the model reads, as Markdown images.

A picture is kept when it sits in the article, has alt text or a caption, and points at an
http(s) URL: ``data:`` URIs, tracking pixels, avatars and icons would spend the reading budget
on nothing. Lazy-loading pages keep the real URL in ``data-src`` or ``srcset``; it is used.
"""

from __future__ import annotations

from lxml.html import HtmlElement

from tools.web_fetch.class_names import name_tokens

# A lazy-loading page keeps a placeholder in src and the picture in one of these.
_SOURCES = ("data-src", "data-original", "data-lazy-src", "data-url", "src")
_TINY_PIXELS = 2
_DECORATION_TOKENS = frozenset(
    {"avatar", "gravatar", "icon", "logo", "emoji", "spinner", "loader", "sprite", "badge", "pixel"}
)


def keep_image(element: HtmlElement) -> bool:
    """Return whether an ``img`` or ``picture`` is kept, pointing an ``img`` at its real source."""
    if element.tag == "picture":
        return any(keep_image(img) for img in element.iter("img"))
    source = _source(element)
    if source is None or _is_decoration(element):
        return False
    element.set("src", source)
    alt = " ".join(element.get("alt", "").split())
    element.set("alt", alt)
    return bool(alt) or _has_caption(element)


def drop_unreadable_images(content: HtmlElement) -> None:
    """Remove from ``content`` every image whose source is not an absolute http(s) URL."""
    for img in list(content.iter("img")):
        if not img.get("src", "").lower().startswith(("http://", "https://")):
            if img.getparent() is not None:
                img.drop_tree()


def _source(img: HtmlElement) -> str | None:
    candidates = [img.get(name, "") for name in _SOURCES]
    candidates.append(img.get("srcset", "").strip().split(" ")[0].rstrip(","))
    for candidate in candidates:
        candidate = candidate.strip()
        if candidate and not candidate.lower().startswith(("data:", "javascript:", "about:")):
            return candidate
    return None


def _is_decoration(img: HtmlElement) -> bool:
    for dimension in ("width", "height"):
        value = img.get(dimension, "").strip().removesuffix("px")
        if value.isdigit() and int(value) <= _TINY_PIXELS:
            return True
    names = f"{img.get('class', '')} {img.get('id', '')}"
    return not _DECORATION_TOKENS.isdisjoint(name_tokens(names))


def _has_caption(img: HtmlElement) -> bool:
    for ancestor in img.iterancestors("figure"):
        return any(
            " ".join(caption.text_content().split()) for caption in ancestor.iter("figcaption")
        )
    return False
