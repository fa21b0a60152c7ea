"""Decodes a body from the web: Content-Type charset, else (HTML) a BOM or <meta>, else UTF-8.

Every body Lookout reads, a page or a search engine's answer, is decoded here.
"""

from __future__ import annotations

import codecs
import json
import re
from email.message import Message
from typing import Any

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# As browsers do, look for a <meta> declaration only near the start of the page.
_META_WINDOW = 4096
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([a-zA-Z0-9._:-]+)""", re.I)


def charset_from_content_type(content_type: str) -> str | None:
    """Return the ``charset`` parameter of a Content-Type header, or None."""
    message = Message()
    message["Content-Type"] = content_type
    charset = message.get_param("charset")
    return charset.strip() if isinstance(charset, str) and charset.strip() else None


def decode_page(data: bytes, mime_type: str, declared: str | None) -> str:
    """Return the page's text, bad bytes replaced; ``declared`` is the Content-Type charset."""
    encoding = _known(declared)
    if encoding is None and mime_type in HTML_TYPES:
        encoding = _sniff_html(data)
    text = data.decode(encoding or "utf-8", errors="replace")
    return text.removeprefix("\ufeff")


def decode_json(data: bytes, declared: str | None) -> str:
    """Return a JSON body's text. JSON is UTF-8, or (RFC 4627) UTF-16 or UTF-32 as its first
    bytes show, a BOM or the place of the zero bytes: that wins over no label or a single-byte
    label (Latin-1, ASCII, windows-1252), which servers put on JSON most often by mistake; such a
    label also gives way to UTF-8 when the bytes are UTF-8. Any other label is read as it says."""
    encoding = _known(declared)
    if encoding in (None, "cp1252"):
        shown = json.detect_encoding(data)
        if shown != "utf-8":
            return data.decode(shown, errors="replace").removeprefix("\ufeff")
    if encoding == "cp1252":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return decode_page(data, "application/json", declared)


# Half a UTF-16 pair, as JSON can write it ("\\ud800") and no text can hold: found in the JSON
# text first (a pair written so matches too), then replaced where json.loads left one alone.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def loads_json(text: str | bytes) -> Any:
    """``json.loads``, with each lone surrogate in a string or key replaced by U+FFFD, as a
    browser's encoder does: such a string cannot be encoded as UTF-8, so storing, sending or
    showing it failed (a model's chunk, a request's body). Raises as ``json.loads`` does."""
    if isinstance(text, bytes):  # decoded here once, as json.loads would decode it
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    value = json.loads(text)
    if _SURROGATE_ESCAPE.search(text) is None:
        return value
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    containers = [value] if isinstance(value, (dict, list)) else []
    while containers:  # a loop, not recursion: the value may nest as deep as json.loads went
        container = containers.pop()
        if isinstance(container, dict):
            pairs = list(container.items())
            container.clear()  # refilled in order, keys mended too
        else:
            pairs = enumerate(container)
        for key, item in pairs:
            if isinstance(item, str):
                item = _LONE_SURROGATE.sub("\ufffd", item)
            elif isinstance(item, (dict, list)):
                containers.append(item)
            if isinstance(key, str):
                key = _LONE_SURROGATE.sub("\ufffd", key)
            container[key] = item
    return value


def _sniff_html(data: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    match = _META_CHARSET.search(data[:_META_WINDOW])
    if match is None:
        return None
    return _known(match.group(1).decode("ascii", "replace"))


def _known(name: str | None) -> str | None:
    """Return a codec name Python knows for ``name``, or None (an unknown label is ignored)."""
    if not name:
        return None
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    # "rot13", "base64" or "zlib" name codecs too, but not text encodings: decoding with one
    # raises (or, for zlib, would inflate a bomb).
    if not info._is_text_encoding:
        return None
    # WHATWG treats ASCII and Latin-1 labels as windows-1252, which every such page expects.
    if info.name in ("ascii", "latin-1", "iso8859-1"):
        return "cp1252"
    return info.name
