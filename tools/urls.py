"""URLs a tool may request: which are refused before any connection, and how to log them."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit, urlunsplit

import idna
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

# urllib.parse and urllib3 split "http://127.0.0.1\@1.1.1.1/" differently, and urlsplit silently
# drops tabs and newlines: refuse such URLs rather than guess which host is meant.
_UNSAFE_URL_CHARACTER = re.compile(r"[\x00-\x20\x7f-\x9f\\]|\s")
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def request_host(url: str) -> str:
    """Return the host a request for ``url`` connects to, as the domain lists must judge it.

    That is the host urllib3 connects to: percent-decoded (``exa%6dple.com`` is
    ``example.com``), IDNA-encoded, lowercased, without a trailing dot; an IPv6 literal without
    its brackets. Raises ``ValueError`` for a URL whose host cannot be parsed or holds a
    character no host name may hold.
    """
    try:
        host = parse_url(url).host
    except (LocationParseError, ValueError) as exc:
        raise ValueError(f"unparsable host in {url!r}") from exc
    if not host:
        raise ValueError(f"no host in {url!r}")
    if host.startswith("["):
        try:
            return str(ipaddress.IPv6Address(host[1:-1].split("%", 1)[0]))
        except ValueError as exc:
            raise ValueError(f"bad IPv6 literal in {url!r}") from exc
    host = host.lower().rstrip(".")
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            raise ValueError(f"bad international host name in {url!r}") from exc
    if not _HOST_NAME.fullmatch(host):
        raise ValueError(f"characters no host name may hold in {url!r}")
    return host


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
    try:
        request_host(url)
    except ValueError:
        return "unparsable host in the URL"
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
