"""Collects the sources a reply cites: http(s) links only, each URL once, titles cut."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import regex

from tools.api import Citation

MAX_TITLE_GRAPHEMES = 300
MAX_TITLE_CHARS = 1200
# Whitespace collapses, so more than the kept characters is read; never the whole string.
_TITLE_HEAD_CHARS = 4 * MAX_TITLE_CHARS
MAX_URL_CHARS = 2048
# A search snippet is a few lines; a longer one is cut, never stored whole.
MAX_SNIPPET_CHARS = 2000
_GRAPHEME = regex.compile(r"\X")


def is_presentable_url(url: object) -> bool:
    """Whether ``url`` may become a link: an absolute http(s) URL with a host.

    The page's JavaScript applies the same rule, tested against the same cases.
    """
    if not isinstance(url, str) or not url or len(url) > MAX_URL_CHARS:
        return False
    if url != url.strip() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def cut_title(title: str | None) -> str | None:
    """Return the title, whitespace collapsed, cut at a cluster boundary to at most 300
    grapheme clusters and 1,200 characters; None when blank. Only its head is read."""
    if title is None:
        return None
    text = " ".join(str(title)[:_TITLE_HEAD_CHARS].split())
    if len(text) <= MAX_TITLE_GRAPHEMES:
        # Within both limits whatever its clusters: a title is cut three times a fetch (the
        # page's, the call's citation, the reply's source), and the regex cost them most.
        return text or None
    kept: list[str] = []
    size = 0
    # One cluster of combining marks can be a megabyte: the regex only sees the head.
    for cluster in _GRAPHEME.findall(text):
        if len(kept) == MAX_TITLE_GRAPHEMES or size + len(cluster) > MAX_TITLE_CHARS:
            break
        kept.append(cluster)
        size += len(cluster)
    return "".join(kept).rstrip() or text[:MAX_TITLE_CHARS] or None


def cut_snippet(snippet: str | None) -> str | None:
    """Return a search snippet with whitespace collapsed, cut to 2,000 characters; None when
    blank or not a string."""
    if not isinstance(snippet, str):
        return None
    return " ".join(snippet[: 2 * MAX_SNIPPET_CHARS].split())[:MAX_SNIPPET_CHARS] or None


class CitationList:
    """The citations of one reply, in order: tool citations and provider sources alike."""

    def __init__(
        self,
        seen: Iterable[str] = (),
        on_add: Callable[[Citation], None] | None = None,
        claim: Callable[[str], bool] | None = None,
    ) -> None:
        """``seen``: URLs the reply already cites; ``claim(url)``: whether a URL shared with
        other processes (parallel tool calls of one reply) is new; ``on_add``: told of each."""
        self.citations: list[Citation] = []
        self._seen = set(seen)
        self._on_add = on_add
        self._claim = claim
        self._lock = threading.Lock()

    def add(
        self, url: str, title: str | None = None, snippet: str | None = None
    ) -> Citation | None:
        """Add a citation and return it; None when the URL is not http(s) or already cited."""
        if not is_presentable_url(url):
            return None
        with self._lock:
            if url in self._seen or (self._claim is not None and not self._claim(url)):
                return None
            self._seen.add(url)
            citation = Citation(url=url, title=cut_title(title), snippet=cut_snippet(snippet))
            self.citations.append(citation)
        if self._on_add is not None:
            self._on_add(citation)
        return citation

    def cite(self, url: str, title: str | None = None, snippet: str | None = None) -> None:
        """``ToolContext.cite``: add a source link to the reply."""
        self.add(url, title, snippet)
