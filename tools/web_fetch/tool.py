"""The web_fetch tool: fetch a page or file, turn it into text, and serve it in parts.

The whole text of a URL is kept in the turn cache under the URL as requested, so asking for
another part in the same turn downloads nothing. HTML is extracted and files are ingested in
a parser process (``PluginContext.parsers``), so a hostile page costs this process nothing.
``execute`` raises what ``download`` raises (``ToolRefused``, ``ToolError``, ``Cancelled``),
plus ``ToolError`` for a malformed or non-http(s) URL, an offset past the end, a file its
ingester cannot read, and a page or file that needs more time or memory than the parser limits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, fields, validate

from tools.api import (
    IngesterRegistry,
    IngestError,
    IngestInput,
    Parsers,
    QuotaUsed,
    Signal,
    Tool,
    ToolContext,
    ToolError,
)
from tools.charset import HTML_TYPES, decode_page
from tools.citations import cut_title
from tools.quotas import FETCH_BYTES
from tools.usage import FETCHED_BYTES, PAGES_FETCHED
from tools.web_fetch.download import Download, FetchLimits, download
from tools.web_fetch.extract import Extracted, extract
from tools.web_fetch.options import DomainRules

NAME = "web_fetch"
DESCRIPTION = (
    "Fetch a web page or document, such as a PDF, and return its main text. Long pages come in "
    "parts; call again with nextOffset for the next part."
)
# The worker's deadline for the whole call leaves this much beyond the download's own limit
# for extraction and ingesting.
DEADLINE_MARGIN_SECONDS = 5


class WebFetchInput(Schema):
    """The model's input: a URL and where in its text to start."""

    url = fields.String(
        required=True,
        validate=validate.Length(min=1, max=8192),
        metadata={"description": "The http or https URL of the page or document."},
    )
    offset = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0),
        metadata={"description": "Character position to start from: nextOffset of a call."},
    )


@dataclass(frozen=True)
class Page:
    """A fetched URL's whole text: the final URL, its title, the text, and the note that says
    the page was cut at the size limit (also the text's first line), if it was."""

    url: str
    title: str | None
    text: str
    note: str | None = None

    def to_cache(self) -> dict[str, Any]:
        """Return the JSON-serialisable form kept in the turn cache."""
        return {"url": self.url, "title": self.title, "text": self.text, "note": self.note}

    @classmethod
    def from_cache(cls, value: Any) -> Page | None:
        """Return the page a turn cache entry holds, or None when it holds none."""
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        note = value.get("note")
        return cls(
            url=str(value.get("url") or ""),
            title=value.get("title"),
            text=value["text"],
            note=note if isinstance(note, str) else None,
        )


def make_tool(
    options: dict[str, Any],
    ingesters: IngesterRegistry,
    parsers: Parsers,
    user_agent: str,
    log: logging.Logger,
) -> Tool:
    """Return the web_fetch tool configured by validated ``options``."""
    limits = FetchLimits(
        rules=DomainRules.from_lists(options["allowDomains"], options["denyDomains"]),
        max_bytes=options["maxBytes"],
        max_file_bytes=options["maxFileBytes"],
        timeout_seconds=options["timeoutSeconds"],
        user_agent=user_agent,
    )
    max_characters: int = options["maxCharacters"]

    def execute(input: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        url: str = input["url"].strip()
        _check_url(url)
        page = Page.from_cache(ctx.turn_cache.get(url))
        if page is None:
            body = counted_download(url, ctx, limits, ingesters.accepts, log)
            page = read_page(body, ingesters, parsers, ctx.signal)
            ctx.turn_cache[url] = page.to_cache()
        ctx.cite(page.url, page.title)
        return part_of(page, input["offset"], max_characters)

    return Tool(
        name=NAME,
        description=DESCRIPTION,
        input_schema=WebFetchInput,
        execute=execute,
        default_enabled=True,
        user_toggle=options["userToggle"],
        untrusted=True,
        timeout_seconds=options["timeoutSeconds"] + DEADLINE_MARGIN_SECONDS,
        grounding="read",
    )


def counted_download(
    url: str,
    ctx: ToolContext,
    limits: FetchLimits,
    accepts_file: Callable[[str], bool],
    log: logging.Logger,
) -> Download:
    """Return the download of ``url``, refused when the user's daily fetch quota is used up, and
    metered once read: its decoded bytes count in usage and against that quota alike."""
    try:
        ctx.quotas.check(FETCH_BYTES)
    except QuotaUsed as exc:
        raise ToolError(exc.message) from None
    body = download(url, ctx.fetch, ctx.signal, limits, accepts_file, log)
    ctx.meter.add(PAGES_FETCHED)
    ctx.meter.add(FETCHED_BYTES, len(body.data))
    return body


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ToolError(f"{url} is not a valid URL.") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ToolError(f"Only http and https URLs can be fetched, and {url} is not one.")


def read_page(
    body: Download, ingesters: IngesterRegistry, parsers: Parsers, signal: Signal
) -> Page:
    """Return the text of a download: HTML extracted, other pages as is, files ingested.

    Extraction and ingesting run in a parser process, stopped when ``signal`` trips.
    """
    if not body.is_page:
        file = IngestInput(body.data, body.mime_type, body.filename, body.url)
        try:
            result = ingesters.ingest(file, signal)
        except IngestError as exc:
            raise ToolError(exc.message) from exc
        if result is None:
            raise ToolError(f"{body.url} is of type {body.mime_type}, which Lookout cannot read.")
        return Page(url=body.url, title=None, text=result.text)
    if body.mime_type in HTML_TYPES:
        extracted = parsers.run(
            extract_html,
            body.data,
            body.mime_type,
            body.charset,
            body.url,
            signal=signal,
            what=body.url,
        )
        page = Page(url=body.url, title=cut_title(extracted.title), text=extracted.text)
    else:
        text = decode_page(body.data, body.mime_type, body.charset)
        page = Page(url=body.url, title=None, text=text)
    if body.cut:
        # At the head, where the model and the reader meet it: a note after the last character
        # of a long page is in a part nobody reads.
        megabytes = len(body.data) / 1_000_000
        note = (
            f"[Lookout read only the first {megabytes:g} MB of this page, its size limit; "
            "the rest was not downloaded.]"
        )
        text = f"{note}\n\n{page.text}".rstrip()
        page = Page(url=page.url, title=page.title, text=text, note=note)
    return page


def extract_html(data: bytes, mime_type: str, charset: str | None, url: str) -> Extracted:
    """Decode and extract an HTML page (run in a parser process)."""
    return extract(decode_page(data, mime_type, charset), url)


def part_of(page: Page, offset: int, size: int) -> dict[str, Any]:
    """Return the tool output for the part of ``page`` starting at ``offset``.

    A part ends at the last line break in its second half when there is one, else after
    ``size`` characters; every part of a page cut at the size limit carries its ``note``.
    Raises ``ToolError`` for an offset past the end.
    """
    total = len(page.text)
    if offset > total or (offset == total and total > 0):
        raise ToolError(f"Offset {offset} is past the end of the page ({total} characters).")
    end = min(offset + size, total)
    if end < total:
        line_break = page.text.rfind("\n", offset + size // 2, end)
        if line_break != -1:
            end = line_break + 1
    output: dict[str, Any] = {"url": page.url}
    if page.title:
        output["title"] = page.title
    output.update(content=page.text[offset:end], offset=offset)
    if page.note:
        output["note"] = page.note
    if end < total:
        output["nextOffset"] = end
    output["totalCharacters"] = total
    return output
