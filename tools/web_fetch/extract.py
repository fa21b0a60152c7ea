"""Turns an HTML page into its title and main text as Markdown, without hidden or boilerplate parts.

The pipeline: lxml parses the page (past ``</body>`` and ``</html>``, as browsers do); scripts,
styles, frames and every element hidden from readers are removed (hidden text is where injected
instructions hide), except the full text behind a visible "read more" teaser, read in the
teaser's place (``hidden``); a text-density pass finds the main text block (``main_block``), which
nothing after it may remove; navigation, headers and footers outside it go, and page furniture
is pruned by structure (``extract_boilerplate``); readability-lxml picks the main content from
that smaller tree (``readability_choice``); links and images are made absolute against the
page's URL (or its ``<base>``); html2text writes it as Markdown (``markdown``).
Readability's choice is one candidate: when it holds few words of a much longer page, or less
than half the words of the main text block and what it left out is prose, that block (or the
cleaned body) is read instead; blocks of the chosen block's tag and class elsewhere on the
page (an article cut into rows around an advert) are read with it. Where the page names its
article's body (schema.org's ``articleBody``, hAtom's ``entry-content``), that body is
protected, and read when readability's choice does not hold it; a recipe the page declares
(schema.org's ``Recipe``, ``hrecipe``) is read whole, after the story beside it
(``declared``). A main block made mostly of blocks named as comments, or itself named as
comments, is a thread, whose replies are read after the post, unless that post is an article
many times as long as the typical reply (on a page that declares itself an article: at least
as long). Prose between the headline (the heading the page's title repeats, or the h1) and the
content's first paragraph (a standfirst beside the story's body or beside the headline) is read
before it; a ``<header>`` that introduces an ``<article>`` is the article's, not the page's.
A page whose text exists only inside ``<noscript>`` or ``<template>`` is read from there.

Images of the article that have alt text or a caption come out as Markdown images with
absolute http(s) URLs, as the spec asks (``images`` says which are kept); the chat page loads
them only on a click that shows the URL, so an injected image cannot call home by itself.
"""

from __future__ import annotations

import copy
import logging
import re
import statistics
from dataclasses import dataclass
from urllib.parse import quote, urljoin

import lxml.etree
import lxml.html
from lxml.html import HtmlElement

from tools.web_fetch.declared import (
    Declared,
    declared_body,
    declared_recipe,
    declares_article,
    parts_of,
)
from tools.web_fetch.extract_boilerplate import remove_boilerplate, remove_controls, thread_posts
from tools.web_fetch.hidden import hidden_elements
from tools.web_fetch.images import drop_unreadable_images
from tools.web_fetch.main_block import (
    TextSizes,
    find_main_block,
    measure,
    protected_elements,
    word_count,
)
from tools.web_fetch.markdown import to_markdown
from tools.web_fetch.readability_choice import readability_choice, text_length
from tools.web_fetch.tree_limits import bound_tree

log = logging.getLogger(__name__)

_PARSER = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
# lxml.html picks each element's class in Python, once for every element the code touches (a
# tenth of the time on a long page), to give form fields their own classes; the form fields are
# removed unread, so one class for every element does, picked by lxml in C.
_PARSER.set_element_class_lookup(
    lxml.etree.ElementDefaultClassLookup(
        element=HtmlElement,
        comment=lxml.html.HtmlComment,
        pi=lxml.html.HtmlProcessingInstruction,
        entity=lxml.html.HtmlEntity,
    )
)
# Elements are found by tag with lxml's own iteration: an XPath union of such lists ("//nav |
# //footer") is merged in quadratic time by libxml2 (4 s for 10,000 of each of three tags).
_UNREAD_TAGS = ("script", "style", "iframe")
# Page furniture by tag, removed unless it holds the main text block (a broken navbar that
# lxml's repair closes around the whole page is not furniture).
_FURNITURE_TAGS = ("nav", "header", "footer")
_SECTIONS = ("article", "aside", "nav", "section", "body")
# Read only when the page's text exists nowhere else (a post served inside <noscript>).
_FALLBACK_TAGS = ("noscript", "template")
_FOLLOWABLE_SCHEMES = ("http:", "https:", "mailto:", "ftp:")
# Spaces and non-ASCII letters in a link are percent-encoded (a space would end a Markdown
# link); what is already encoded, and URL syntax, stays as it is.
_URL_SAFE = "%:/?#[]@!$&'()*+,;=~"
_MIN_ARTICLE_WORDS = 50
# Readability's choice holding less than this share of the main text block's words missed it.
_MIN_SHARE_OF_MAIN = 0.5
# ... unless what it left out is mostly links (the block was the page's frame), or it kept so
# little of the block that it missed whatever the rest is.
_MAX_LEFT_OUT_LINK_DENSITY = 0.1
_MIN_SHARE_OF_FRAME = 0.1
# An article is at least this many times as long as the typical comment under it; a forum's
# opening post is about as long as its replies (reddit's: two and a half times).
_ARTICLE_OVER_POST = 4
# A page that declares itself an article is one unless its article is shorter than the typical
# comment under it: an "open thread" whose post only opens the discussion.
_DECLARED_ARTICLE_OVER_POST = 1
# Fewer words than this left by pruning means the pruning took the page for furniture.
_MIN_PRUNED_WORDS = 10
# A page with less prose than this outside its links (about 60 words, under one paragraph of an
# article) is a list of links: a front page, a section, a directory, search results.
_MIN_PROSE_CHARS = 400
# A lead (a standfirst, a post's own words before an embedded document) is a paragraph of
# prose, one in which a sentence ends, between the headline and the content's first paragraph,
# found among the few paragraphs after the headline and sharing a close ancestor with it.
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)»]?(?:\s|$)|[。！？]")
_LEAD_MIN_CHARS = 80
_LEAD_SEARCH = 6
_LEAD_LEVELS = 3
_DECK_LEVELS = 2
_LEAD_MAX_LINK_SHARE = 0.25
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# An article is cut into at most this many blocks of one class; more are a list of teasers.
_MAX_PARTS = 10
_WORD = re.compile(r"\w+")
# An end tag of the body or the document, spaces before its ">" as Python's \s has them (Unicode's
# too, as UTF-8), sought in the encoded page: the same pattern over the decoded text took three
# times as long, and the text is encoded anyway.
_DOCUMENT_END = re.compile(
    rb"</(?:body|html)(?:[\t-\r\x1c-\x20]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
    rb"|\xe2\x81\x9f|\xe3\x80\x80)*>",
    re.I,
)
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Extracted:
    """A page's title (None when it has none) and its main text as Markdown."""

    title: str | None
    text: str


@dataclass(frozen=True)
class _Thread:
    """A main block made of posts: its replies, pruned as a thread, and each post's size."""

    replies: HtmlElement
    post_chars: list[int]
    article_over_post: float


def extract(html: str, url: str) -> Extracted:
    """Return the title and main text of an HTML page as Markdown; never raises on bad input."""
    root = _parse(html)
    if root is None:
        return Extracted(title=None, text="")
    title = _find_title(root)
    base = _base_url(root, url)
    _remove_unread(root)
    body = root.body if root.find("body") is not None else root
    remove_controls(body)
    sizes = measure(body)
    if _read_fallback_markup(body, sizes):
        sizes = measure(body)
    # A list of links has its text in its links: its block is found by all of its text, its
    # link lists are its content, and readability, which looks for an article, is not asked.
    listing = sizes.prose(body) < _MIN_PROSE_CHARS
    main = find_main_block(body, sizes, links=listing)
    protected = protected_elements(body, main, sizes)
    declared = _protected_mark(declared_body(body, _MIN_PRUNED_WORDS), protected)
    recipe = _protected_mark(declared_recipe(body, _MIN_PRUNED_WORDS), protected, parts=True)
    thread = _thread_of(root, body, main, protected, sizes)
    _remove_furniture_tags(root, main, protected)
    own = remove_boilerplate(body, main, protected, link_lists=not listing)
    if listing:
        content = main
    else:
        content = readability_choice(root, keep=[*own, *main.iterdescendants("header")])
    if declared is not None:
        content = _holding_declared(content, declared)
    elif thread is not None:
        if not _stands_over(content, thread):
            content = _joined(content, thread.replies)
    else:
        # The choice's words are counted once for both checks.
        found = 0 if content is None else word_count(content)
        if content is None or _too_short(found, body) or _misses_main(content, found, main, body):
            content = main
        content = _with_parts(content, body)
    if recipe is not None:
        content = _with_recipe(content, recipe)
    if word_count(content) < _MIN_PRUNED_WORDS:
        content = _unpruned_body(html, content)
    else:
        content = _with_lead(content, _headline(body, title))
    _make_links_absolute(content, base)
    drop_unreadable_images(content)
    # html2text runs these into the text around them; as paragraphs they stand apart.
    for element in content.iter("figure", "figcaption", "aside", "details", "summary"):
        element.tag = "p" if element.tag in ("figcaption", "summary") else "div"
    markdown = to_markdown(content)
    return Extracted(title=title, text=markdown)


def _thread_of(
    root: HtmlElement,
    body: HtmlElement,
    main: HtmlElement,
    protected: set[HtmlElement],
    sizes: TextSizes,
) -> _Thread | None:
    # A main block made mostly of posts named as furniture is a thread: its replies are read
    # after the post that readability finds once they are pruned, unless that post is an
    # article many times as long as the typical reply (see _stands_over).
    if main is body:
        return None
    posts = thread_posts(main, protected, sizes)
    if not posts:
        return None
    replies = copy.deepcopy(main)
    remove_boilerplate(replies, replies, {replies}, thread=True)
    for post in posts:  # read as replies; readability looks for the post among the rest
        _drop(post)
    over = _DECLARED_ARTICLE_OVER_POST if declares_article(root) else _ARTICLE_OVER_POST
    return _Thread(replies, [sizes.total.get(post, 0) for post in posts], over)


def _headline(body: HtmlElement, title: str | None) -> HtmlElement | None:
    # The story's headline is the heading the page's title repeats (the title adds the site's
    # name; a site's own name is too short a part of it to count), whatever its level: many
    # blogs write their headline as an h2 or h4 and their logo as the h1. Without one, the h1.
    words = _WORD.findall((title or "").lower())
    for heading in body.iter(_HEADINGS):
        found = _WORD.findall(heading.text_content().lower())
        if len(found) * 2 >= len(words) and _in_a_row(found, words):
            return heading
    return next(body.iter("h1"), None)


def _in_a_row(found: list[str], words: list[str]) -> bool:
    return bool(found) and f" {' '.join(found)} " in f" {' '.join(words)} "


def _with_lead(content: HtmlElement, headline: HtmlElement | None) -> HtmlElement:
    # Readability and the density pass choose the story's body; a standfirst beside it, or a
    # post's own paragraph above the press release it quotes, is left out. Prose between the
    # headline and the content's first paragraph, close to that paragraph in the tree or
    # beside the headline, is read before it.
    texts = (_text(paragraph) for paragraph in content.iter("p"))
    target = next((text for text in texts if len(text) >= _LEAD_MIN_CHARS), None)
    if headline is None or target is None:
        return content
    lead: list[HtmlElement] = []
    for paragraph in headline.xpath(f"following::p[position() <= {_LEAD_SEARCH}]"):
        text = _text(paragraph)
        if text == target:
            near = list(paragraph.iterancestors())[:_LEAD_LEVELS]
            lead = [p for p in lead if _near(p, near) or _beside(p, headline)]
            break
        if _is_prose(paragraph, text):
            lead.append(paragraph)
    else:
        return content
    if not lead:
        return content
    copies = [copy.deepcopy(paragraph) for paragraph in lead]
    for copied in copies:
        copied.tail = None
    return _joined(*copies, content)


def _near(paragraph: HtmlElement, near: list[HtmlElement]) -> bool:
    return any(ancestor in near for ancestor in paragraph.iterancestors())


def _beside(paragraph: HtmlElement, headline: HtmlElement) -> bool:
    # A standfirst in the headline's own block (a deck under the h1, the story's body in
    # another row of the layout): the paragraph, or its wrapper, is the headline's sibling.
    return headline.getparent() in list(paragraph.iterancestors())[:_DECK_LEVELS]


def _text(element: HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _is_prose(paragraph: HtmlElement, text: str) -> bool:
    linked = sum(text_length(link) for link in paragraph.iter("a"))
    return (
        len(text) >= _LEAD_MIN_CHARS
        and linked <= _LEAD_MAX_LINK_SHARE * len(text)
        and _SENTENCE_END.search(text) is not None
    )


def _protected_mark(
    element: HtmlElement | None, protected: set[HtmlElement], parts: bool = False
) -> Declared | None:
    # What the page declares no rule may remove; readability's copy is searched for its mark.
    if element is None:
        return None
    protected.update((element, *element.iterancestors()))
    return Declared.mark(element, parts=parts)


def _holding_declared(content: HtmlElement | None, declared: Declared) -> HtmlElement:
    # The page says where its article is: readability's choice stands when it holds that
    # body (with the headline and byline around it), and is replaced by it otherwise (a
    # sidebar of teasers outscoring a short post, or one part of the body chosen alone).
    if declared.held_by(content):
        return content
    parts = parts_of(declared.element)
    return parts[0] if len(parts) == 1 else _joined(*parts)


def _with_recipe(content: HtmlElement | None, recipe: Declared) -> HtmlElement:
    # The page says it holds a recipe: readability's choice stands when it holds the whole
    # recipe; a part of it (the method, without the ingredients beside it) gives way to the
    # recipe, and a story beside the recipe card is read before it.
    if recipe.held_by(content):
        return content
    if content is None or recipe.part_held_by(content):
        return recipe.element
    return _joined(content, recipe.element)


def _with_parts(content: HtmlElement, body: HtmlElement) -> HtmlElement:
    # An article cut into blocks of one tag and class, each in a row of its own between adverts
    # or side rails (two div.story-text), is chosen by its longest block. The others that are
    # prose (a paragraph of some length, little link text) and article-sized (a teaser is not),
    # not yet read, are read with it, in the page's order.
    # The chosen blocks' (tag, class) pairs, each once, in order, with the page's blocks of each.
    same: dict[tuple[str, str], list[HtmlElement]] = {
        (child.tag, child.get("class")): []
        for child in content
        if isinstance(child.tag, str) and child.get("class")
    }
    if not same:
        return content
    for element in body.iter({tag for tag, _names in same}):
        found = same.get((element.tag, element.get("class")))
        if found is not None:
            found.append(element)
    text = _text(content)
    for parts in same.values():
        if not 2 <= len(parts) <= _MAX_PARTS:
            continue
        firsts = [_first_prose(part) for part in parts]
        held = [first is not None and first in text for first in firsts]
        if not any(held):
            continue
        start = held.index(True)
        missing = [
            (index, part)
            for index, (part, first, read) in enumerate(zip(parts, firsts, held, strict=True))
            if first is not None and not read and word_count(part) >= _MIN_ARTICLE_WORDS
        ]
        if missing:
            before = [copy.deepcopy(part) for index, part in missing if index < start]
            after = [copy.deepcopy(part) for index, part in missing if index > start]
            return _joined(*before, content, *after)
    return content


def _first_prose(element: HtmlElement) -> str | None:
    # The text of the element's first paragraph of prose, which says where it is read.
    for paragraph in element.iter("p"):
        text = _text(paragraph)
        if _is_prose(paragraph, text):
            return text
    return None


def _stands_over(content: HtmlElement | None, thread: _Thread) -> bool:
    # What readability found outside the posts is an article, and the posts its comments, when
    # it is many times as long as the typical post; a forum's opening post is one post of many.
    if content is None:
        return False
    typical = statistics.median(thread.post_chars)
    return measure(content).total[content] >= thread.article_over_post * typical


def _joined(*parts: HtmlElement | None) -> HtmlElement:
    # One <div> holding the parts read together, in order (a missing part is left out).
    joined = lxml.html.Element("div")
    joined.extend(part for part in parts if part is not None)
    return joined


def _parse(html: str) -> HtmlElement | None:
    # Encoding to UTF-8 bytes with a UTF-8 parser makes lxml ignore any declared charset,
    # which would be wrong for text that is already decoded.
    if _looks_binary(html):
        return None
    # lxml stops reading at </body> or </html>; browsers read on, and pages glued together
    # from several documents (a story after a weather box's whole page) are read as they show.
    data = _DOCUMENT_END.sub(b"", html.encode("utf-8", "replace"))
    try:
        root = lxml.html.document_fromstring(data, parser=_PARSER)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError):
        return None
    if not isinstance(root, HtmlElement):
        return None
    bound_tree(root)
    return root


def _looks_binary(html: str) -> bool:
    # As file(1) judges: a text is not full of control characters (a stray one is forgiven).
    head = html[:4096]
    controls = len(_CONTROL_CHARS.findall(head))
    return not head.strip() or controls > len(head) // 10


def _find_title(root: HtmlElement) -> str | None:
    for candidate in (
        root.xpath("string(descendant::meta[@property='og:title']/@content)"),
        root.findtext(".//title"),
        root.xpath("string(//h1)"),
    ):
        title = " ".join((candidate or "").split())
        if title:
            return title
    return None


def _remove_unread(root: HtmlElement) -> None:
    for element in list(root.iter(_UNREAD_TAGS)):
        _drop(element)
    for element in hidden_elements(root):
        if element is not root:
            _drop(element)


def _read_fallback_markup(body: HtmlElement, sizes: TextSizes) -> bool:
    """Drop <noscript> and <template>, or unwrap them when they hold most of the page's text.

    Returns whether the tree changed beyond removals (its sizes must then be measured again).
    """
    fallbacks = list(body.getroottree().iter(_FALLBACK_TAGS))
    outermost: list[HtmlElement] = []
    covered: set[HtmlElement] = set()
    for element in fallbacks:
        if element not in covered:
            outermost.append(element)
            covered.update(element.iter())
    inside = sum(sizes.total.get(element, 0) for element in outermost)
    if inside <= sizes.total.get(body, 0) - inside:
        for element in outermost:
            _drop(element)
        return False
    for element in reversed(fallbacks):
        _unwrap_markup(element)
    return True


def _unwrap_markup(element: HtmlElement) -> None:
    # A <noscript> in <head>, or a text <template>, holds its markup as text: parse it.
    if len(element) == 0 and "<" in (element.text or ""):
        try:
            parsed = lxml.html.fragment_fromstring(element.text, create_parent="div")
        except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError):
            parsed = None
        if parsed is not None:
            parsed.tail = element.tail
            element.getparent().replace(element, parsed)
            parsed.drop_tag()
            return
    element.drop_tag()


def _remove_furniture_tags(
    root: HtmlElement, main: HtmlElement, protected: set[HtmlElement]
) -> None:
    # A header inside the main block, or heading an <article>, is the article's own: its
    # headline and standfirst stay (HTML: a header introduces its nearest section).
    inside = set(main.iterdescendants())
    for element in list(root.iter(_FURNITURE_TAGS)):
        if element in protected or (
            element.tag == "header" and (element in inside or _heads_article(element))
        ):
            continue
        _drop(element)


def _heads_article(header: HtmlElement) -> bool:
    section = next(header.iterancestors(_SECTIONS), None)
    return section is not None and section.tag == "article"


def _drop(element: HtmlElement) -> None:
    if element is not None and element.getparent() is not None:
        element.drop_tree()


def _base_url(root: HtmlElement, url: str) -> str:
    base = root.xpath("string(descendant::base[@href][1]/@href)").strip()
    try:
        return urljoin(url, base) if base else url
    except ValueError:
        return url


def _make_links_absolute(content: HtmlElement, base: str) -> None:
    # Only links and pictures reach the Markdown. A javascript: or app link cannot be followed
    # by the model (its text stays); a picture that is not http(s) is dropped later.
    for element in content.iter("a", "img"):
        attribute = "href" if element.tag == "a" else "src"
        value = element.get(attribute)
        if value is None:
            continue
        try:
            link = quote(urljoin(base, value.strip()), safe=_URL_SAFE)
        except ValueError:  # a malformed URL, such as an unclosed IPv6 host
            link = ""
        if element.tag == "a" and not link.lower().startswith(_FOLLOWABLE_SCHEMES):
            del element.attrib["href"]
        else:
            element.set(attribute, link)


def _too_short(found: int, body: HtmlElement) -> bool:
    # A few words (``found``) out of a much longer page mean readability missed, as on pages
    # with no article.
    return found < _MIN_ARTICLE_WORDS and found < word_count(body) / 2


def _misses_main(content: HtmlElement, found: int, main: HtmlElement, body: HtmlElement) -> bool:
    # Readability's choice is one candidate: holding under half of the block that the text
    # density found, it chose one section, a quote or a notice over the page's text, when what
    # it left out of the block reads as prose. Left-out link lists, teasers and widgets mean the
    # block was the page's frame and readability found the article in it; a choice of under a
    # tenth of the block missed it whatever the rest is.
    if main is body or found >= word_count(main) * _MIN_SHARE_OF_MAIN:
        return False
    chosen, block = measure(content), measure(main)
    left_out = block.total[main] - chosen.total[content]
    left_out_links = block.linked[main] - chosen.linked[content]
    if chosen.total[content] < _MIN_SHARE_OF_FRAME * block.total[main]:
        return True
    return left_out_links <= _MAX_LEFT_OUT_LINK_DENSITY * left_out


def _unpruned_body(html: str, content: HtmlElement) -> HtmlElement:
    # A page made of link lists (a directory, a table of contents) is all furniture to the
    # pruning; when it leaves almost nothing, the page is read again without it.
    root = _parse(html)
    if root is None or root.find("body") is None:
        return content
    _remove_unread(root)
    for element in list(root.iter(*_FURNITURE_TAGS, *_FALLBACK_TAGS)):
        _drop(element)
    return root.body if word_count(root.body) > word_count(content) else content
