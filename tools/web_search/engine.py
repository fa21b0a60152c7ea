"""The interface every search engine adapter implements, and what adapters build and return.

An adapter only builds the request and maps the response; ``tools.web_search.search`` sends it.
What adapters share for reading answers is here too: ``load_json`` and ``load_entries``, and
``validation_messages`` for 422 entries. Adapters hand titles and snippets over as the engine
sends them; ``text_from_html`` is the one rule that makes every engine's plain text, applied by
the shared code to every result.

Errors an adapter raises from ``parse``::

    Exception
    ├── EngineBlocked        the engine answered with a block or bot-check page
    └── MalformedResponse    the body is not a results page the adapter understands
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import lxml.html
import marshmallow

# Never text a reader sees: control characters, lone surrogates (half a pair in a JSON body)
# and the non-characters U+FFFE and U+FFFF. lxml refuses most of them and stops reading a
# string at a lone surrogate, and none of them can be stored as UTF-8 output.
UNREADABLE_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


class EngineBlocked(Exception):
    """The engine could not search (a block page, or every source behind it failed)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MalformedResponse(Exception):
    """The body is not a results page; the caller words the message with the engine's name.

    ``web_page`` is true when an HTML page came where JSON belongs: the address leads to a
    website, a sign-in page or a proxy's notice rather than to the engine's API.
    """

    def __init__(self, why: str, web_page: bool = False) -> None:
        super().__init__(why)
        self.web_page = web_page


@dataclass(frozen=True)
class Search:
    """One search as an adapter sees it: the query, how many results, and the credentials."""

    query: str
    count: int
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None


@dataclass(frozen=True)
class EngineRequest:
    """An HTTP request built by an adapter (headers may hold a key, so they are not in repr)."""

    method: str
    url: str
    params: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class SearchResult:
    """One result as the engine sent it (the shared code makes its text plain and cuts it)."""

    title: str
    url: str
    snippet: str


class SearchEngine:
    """A search engine adapter: what it needs, how to ask it, and how to read its answer.

    Subclasses set ``id``, ``name``, ``needs_key``, ``needs_base_url``, ``operators`` and
    ``rate_per_second`` (what the provider's entry plan allows; the admin may set another), and
    implement ``request`` and ``parse``.
    """

    id: str = ""
    name: str = ""
    needs_key: bool = False
    needs_base_url: bool = False
    operators: tuple[str, ...] = ()
    rate_per_second: float = 1.0

    def request(self, search: Search) -> EngineRequest:
        """Return the HTTP request that runs ``search``."""
        raise NotImplementedError

    def parse(self, body: str) -> list[SearchResult]:
        """Return the results in a 200 response's body, titles and snippets as the engine
        sent them: the shared code turns any tags and entities in them into plain text, with
        one rule for every engine (``text_from_html``).

        Raises ``EngineBlocked`` for a block page and ``MalformedResponse`` when the body is
        not a results page.
        """
        raise NotImplementedError

    def describe_error(self, status: int, body: str) -> str | None:
        """Return this engine's message for an error status, or None for the shared wording."""
        return None

    def unavailable(self, status: int) -> str | None:
        """Return why an error status means the engine cannot search now ("rate-limited",
        "blocked" or "down"), so that a fallback may answer; None for other errors."""
        if status == 429:
            return "rate-limited"
        return "down" if status >= 500 else None

    def error_detail(self, body: Any) -> str | None:
        """Return the engine's own explanation from a JSON error body, or None."""
        return None


def load_json(body: str, schema: type[marshmallow.Schema]) -> dict[str, Any]:
    """Return ``body`` parsed as JSON and loaded by ``schema``; raise ``MalformedResponse``."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        # RecursionError: JSON nested deeper than Python's stack, which a hostile engine sends.
        raise MalformedResponse(str(exc)[:200], web_page=body.lstrip()[:1] == "<") from exc
    try:
        return schema().load(data)
    except (ValueError, TypeError, RecursionError, marshmallow.ValidationError) as exc:
        raise MalformedResponse(str(exc)[:200]) from exc


# No search shows more than 20 results; an engine answering with a hundred thousand entries
# would keep the worker reading them for seconds.
MAX_ENTRIES = 200


def load_entries(entries: Any, schema: type[marshmallow.Schema]) -> list[dict[str, Any]]:
    """Return the entries of a result list that ``schema`` loads, skipping the others.

    One odd entry (not an object, a null where a string should be, a URL that is a number)
    costs that entry, not the results beside it. A list whose every entry is odd is no
    results list: raise ``MalformedResponse``. Only the first ``MAX_ENTRIES`` are read.
    """
    if not isinstance(entries, list):
        raise MalformedResponse("the results are not a list")
    entries = entries[:MAX_ENTRIES]
    loader = schema()
    loaded = []
    for entry in entries:
        try:
            loaded.append(loader.load(entry))
        except (TypeError, ValueError, RecursionError, marshmallow.ValidationError):
            continue
    if entries and not loaded:
        raise MalformedResponse("no result could be read")
    return loaded


class Lenient(marshmallow.Schema):
    """A response schema that keeps only the fields it declares and ignores the rest."""

    class Meta:
        unknown = marshmallow.EXCLUDE


# The elements of HTML, for telling a tag from text that only looks like one: a snippet from
# any engine may carry <b> or &amp;, and may also be about std::vector<T> or <typename T>.
HTML_ELEMENTS = (
    "a abbr acronym address area article aside audio b base bdi bdo big blockquote body br "
    "button canvas caption center cite code col colgroup data datalist dd del details dfn "
    "dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset "
    "h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li "
    "link main map mark marquee menu meta meter nav nobr noscript object ol optgroup option "
    "output p param picture pre progress q rp rt ruby s samp script search section select "
    "small source span strike strong style sub summary sup svg table tbody td template "
    "textarea tfoot th thead time title tr track tt u ul var video wbr"
).split()
# A "<" that opens no element, comment or declaration is a character of the text.
_NOT_A_TAG = re.compile(
    r"<(?!/?(?:" + "|".join(sorted(HTML_ELEMENTS, key=len, reverse=True)) + r")(?=[\s/>]|$)|[!?])",
    re.IGNORECASE,
)
# What is read of a title or snippet: ten times more than a snippet keeps, for its markup.
MAX_FRAGMENT_CHARS = 5_000


def text_from_html(fragment: str) -> str:
    """Return the plain text of a title or snippet from any engine: tags removed as markup,
    entities decoded once after, and only the first ``MAX_FRAGMENT_CHARS`` read.

    Markup is read as a browser reads it, except that a ``<`` opening no HTML element is
    text: ``std::vector<T>`` and ``std::vector&lt;T&gt;`` both give ``std::vector<T>``, and
    ``<b>`` around a word goes. Characters no reader sees become spaces.
    """
    fragment = fragment[:MAX_FRAGMENT_CHARS]
    if "<" not in fragment and "&" not in fragment:
        return fragment
    readable = _NOT_A_TAG.sub("&lt;", UNREADABLE_CHARACTERS.sub(" ", fragment))
    # libxml2 reads in linear time whatever the markup; the fragment goes in a body of its
    # own so that it is never an empty document and text before any tag is kept.
    document = lxml.html.document_fromstring(f"<html><body>{readable}</body></html>")
    return str(document.xpath("string()"))


_PLACES = {
    "body": "body field",
    "query": "query parameter",
    "header": "header",
    "path": "path parameter",
    "cookie": "cookie",
}


def validation_messages(entries: Any) -> str | None:
    """Return each validation entry's ``msg`` with where it applies, from its ``loc``.

    APIs built on FastAPI and pydantic answer a 422 with entries shaped ``{"loc": ["query",
    "count"], "msg": ...}``: this gives "Input should be ... (query parameter count)", entries
    joined with "; ", or None when there is none.
    """
    if not isinstance(entries, list):
        return None
    messages = []
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("msg"):
            continue
        where = _place(entry.get("loc"))
        messages.append(f"{entry['msg']} ({where})" if where else str(entry["msg"]))
    return "; ".join(messages) or None


def _place(loc: Any) -> str:
    if not isinstance(loc, list) or not loc:
        return ""
    parts = [str(part) for part in loc]
    if parts[0] in _PLACES and len(parts) > 1:
        return f"{_PLACES[parts[0]]} {'.'.join(parts[1:])}"
    return ".".join(parts)
