"""URLs a tool may request: which are refused before any connection, and how to log them."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

# urllib.parse and urllib3 split "http://127.0.0.1\@1.1.1.1/" differently, and urlsplit silently
# drops tabs and newlines: refuse such URLs rather than guess which host is meant.
_UNSAFE_URL_CHARACTER = re.compile(r"[\x00-\x20\x7f-\x9f\\]|\s")


def find_url_problem(url: str) -> str | None:
    """Return why a guarded session refuses ``url`` before connecting, or None when it is fine."""
    unsafe = _UNSAFE_URL_CHARACTER.search(url)
    if unsafe is not None:
        if unsafe.group() == "\\":
            return "backslash in the URL"
        return "space or control character in the URL"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return "unparsable URL"
    if parts.scheme.lower() not in ("http", "https"):
        return f"scheme {parts.scheme!r} is not http or https"
    if "@" in parts.netloc:
        return "credentials (user@) in the URL"
    if not parts.hostname:
        return "no host in the URL"
    return None


def redact_url(url: str) -> str:
    """Return ``url`` without credentials, query string or fragment, printable and fit to log."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return "<unparsable URL>"
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    text = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    printable = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return printable if len(printable) <= 200 else printable[:199] + "…"
