"""Turns an HTML page into its title and main text as Markdown, without hidden or boilerplate parts.

The pipeline: lxml parses the page; scripts, styles, navigation, headers, footers and every
element hidden from readers are removed (hidden text is where injected instructions hide);
page furniture is pruned by structure (``extract_boilerplate``); readability-lxml picks the
main content from that smaller tree; its links are made absolute against the page's URL (or
its ``<base>``); html2text writes it as Markdown. When readability finds nothing, or a few
words out of a much longer page, the cleaned body is converted instead, so a page without an
article still reads.

Images are left out. The model reads text: an image reaches it only as alt text, which mostly
repeats the caption or headline beside it, and a long URL, which spends the reading budget
and is the very thing an injected page would like the model to repeat into the chat (the UI
loads Markdown images only on a click for that reason). A linked picture leaves no empty link.
"""

from __future__ import annotations

import copy
import logging
import re
from dataclasses import dataclass
from urllib.parse import urljoin

import html2text
import lxml.etree
import lxml.html
from lxml.html import HtmlElement
from readability import Document

from tools.web_fetch.extract_boilerplate import remove_boilerplate

log = logging.getLogger(__name__)

_PARSER = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
_UNREAD_TAGS = (
    "script",
    "style",
    "nav",
    "header",
    "footer",
    "noscript",
    "template",
    "iframe",
)
_UNREAD_XPATH = " | ".join(f"//{tag}" for tag in _UNREAD_TAGS)
_MAYBE_HIDDEN_XPATH = "//*[@hidden or @aria-hidden or @style]"
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
_FOLLOWABLE_SCHEMES = ("http:", "https:", "mailto:", "ftp:")
_MIN_ARTICLE_WORDS = 50
# Fewer words than this left by pruning means the pruning took the page for furniture.
_MIN_PRUNED_WORDS = 10
_WORD = re.compile(r"\w")
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Extracted:
    """A page's title (None when it has none) and its main text as Markdown."""

    title: str | None
    text: str


def extract(html: str, url: str) -> Extracted:
    """Return the title and main text of an HTML page as Markdown; never raises on bad input."""
    root = _parse(html)
    if root is None:
        return Extracted(title=None, text="")
    title = _find_title(root)
    base = _base_url(root, url)
    _remove_unread(root)
    body = root.body if root.find("body") is not None else root
    remove_boilerplate(body)
    content = _main_content(root)
    if content is None or _too_short(content, body):
        content = body
    if _word_count(content) < _MIN_PRUNED_WORDS:
        content = _unpruned_body(html, content)
    _make_links_absolute(content, base)
    markdown = _to_markdown(lxml.html.tostring(content, encoding="unicode"))
    return Extracted(title=title, text=markdown)


def _parse(html: str) -> HtmlElement | None:
    # Encoding to UTF-8 bytes with a UTF-8 parser makes lxml ignore any declared charset,
    # which would be wrong for text that is already decoded.
    if _looks_binary(html):
        return None
    data = html.encode("utf-8", "replace")
    try:
        root = lxml.html.document_fromstring(data, parser=_PARSER)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError):
        return None
    return root if isinstance(root, HtmlElement) else None


def _looks_binary(html: str) -> bool:
    # As file(1) judges: a text is not full of control characters (a stray one is forgiven).
    head = html[:4096]
    controls = sum(1 for char in head if _is_control(char))
    return not head.strip() or controls > len(head) // 10


def _is_control(char: str) -> bool:
    return (char < " " and char not in "\t\n\r\f") or "\x7f" <= char <= "\x9f"


def _find_title(root: HtmlElement) -> str | None:
    for candidate in (
        root.xpath("string(//meta[@property='og:title']/@content)"),
        root.findtext(".//title"),
        root.xpath("string(//h1)"),
    ):
        title = " ".join((candidate or "").split())
        if title:
            return title
    return None


def _remove_unread(root: HtmlElement) -> None:
    doomed = root.xpath(_UNREAD_XPATH)
    doomed += [e for e in root.xpath(_MAYBE_HIDDEN_XPATH) if _is_hidden(e)]
    for element in doomed:
        if element is not root and element.getparent() is not None:
            element.drop_tree()


def _is_hidden(element: HtmlElement) -> bool:
    attrib = element.attrib
    if "hidden" in attrib:
        return True
    if attrib.get("aria-hidden", "").strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(attrib.get("style", "")))


def _base_url(root: HtmlElement, url: str) -> str:
    base = root.xpath("string(//base[@href][1]/@href)").strip()
    try:
        return urljoin(url, base) if base else url
    except ValueError:
        return url


def _make_links_absolute(content: HtmlElement, base: str) -> None:
    try:
        content.make_links_absolute(base, resolve_base_href=False, handle_failures="discard")
    except ValueError:
        log.debug("links left relative: %r is not a usable base URL", base)
    # A javascript: or app link cannot be followed by the model; its text stays.
    for link in content.xpath("descendant-or-self::a[@href]"):
        if not link.get("href", "").lower().startswith(_FOLLOWABLE_SCHEMES):
            del link.attrib["href"]


class _CleanedDocument(Document):
    """readability's Document for a tree this module has already cleaned and pruned."""

    def _parse(self, input: HtmlElement) -> HtmlElement:
        # readability would clean again (a deep copy and a pass over every link of the page);
        # the copy is still needed, as a second, less ruthless pass starts from the tree again.
        self.encoding = "utf-8"
        return copy.deepcopy(input)


def _main_content(root: HtmlElement) -> HtmlElement | None:
    try:
        summary = _CleanedDocument(root).summary(html_partial=True)
        return lxml.html.fragment_fromstring(summary, create_parent="div")
    except Exception:  # readability wraps any failure in Unparseable; the body is the fallback
        log.debug("readability found no article", exc_info=True)
        return None


def _too_short(content: HtmlElement, body: HtmlElement) -> bool:
    # A few words out of a much longer page mean readability missed, as on pages with no article.
    found = _word_count(content)
    return found < _MIN_ARTICLE_WORDS and found < _word_count(body) / 2


def _unpruned_body(html: str, content: HtmlElement) -> HtmlElement:
    # A page made of link lists (a directory, a table of contents) is all furniture to the
    # pruning; when it leaves almost nothing, the page is read again without it.
    root = _parse(html)
    if root is None or root.find("body") is None:
        return content
    _remove_unread(root)
    return root.body if _word_count(root.body) > _word_count(content) else content


def _word_count(element: HtmlElement) -> int:
    return len(element.text_content().split())


def _to_markdown(fragment: str) -> str:
    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.unicode_snob = True
    converter.ignore_links = False
    converter.ignore_images = True
    text = converter.handle(fragment)
    text = _BLANK_RUNS.sub("\n\n", _strip_line_ends(text)).strip()
    # Text without a single letter or digit (stray brackets, entities) has nothing to read.
    return text if _WORD.search(text) else ""


def _strip_line_ends(text: str) -> str:
    # Linear on purpose: the regex "[ \t]+$" with re.M retries from every space of a long run
    # that ends in another character, which is quadratic in the run's length.
    return "\n".join(line.rstrip(" \t") for line in text.split("\n"))
