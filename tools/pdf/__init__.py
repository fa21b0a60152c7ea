"""The pdf plugin: an ingester that reads the text of every page of a PDF with pypdf.

``PdfIngester.ingest`` raises ``IngestError`` for an encrypted PDF that needs a password and for
a file pypdf cannot read (damaged, or not a PDF at all); no pypdf exception escapes.

A PDF is an attacker's program for pypdf: the host runs the ingester in a parser process that
the OS limits, and the reading itself stops early: at ``MAX_PAGES`` pages, ``MAX_CONTENT_BYTES``
of decompressed page content in all (pypdf caps each stream), and ``MAX_TEXT_CHARS`` of text;
pages drawn by one shared content stream (thousands of pages, one large stream) are read once.
The text says where and why reading stopped.
"""

from __future__ import annotations

import io
import logging

from marshmallow import Schema
from pypdf import PageObject, PdfReader
from pypdf.errors import LimitReachedError, PyPdfError
from pypdf.generic import ArrayObject, IndirectObject

from tools.api import Ingester, IngestError, IngestInput, IngestResult, Plugin, PluginContext

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
MAX_PAGES = 2000
MAX_CONTENT_BYTES = 200_000_000
MAX_TEXT_CHARS = 2_000_000
# A file without a usable catalog makes pypdf look objects up one by one to find it, each
# lookup a search of the whole file: 10,000 (its default) cost a 400 KB file half a minute.
ROOT_RECOVERY_OBJECTS = 200
log = logging.getLogger(__name__)


def accepts_pdf(mime_type: str) -> bool:
    """Whether ``mime_type`` (bare, lowercase) is a PDF."""
    return mime_type in PDF_TYPES


def ingest_pdf(file: IngestInput) -> IngestResult:
    """Return the text of every page, pages separated by a blank line."""
    name = _describe(file)
    try:
        reader = PdfReader(io.BytesIO(file.data), root_object_recovery_limit=ROOT_RECOVERY_OBJECTS)
        if reader.is_encrypted and not _opens_without_password(reader):
            raise IngestError(
                f"{name} is encrypted with a password, so Lookout cannot read its text."
            )
        _find_catalog(reader, name)
        pages = _read_pages(reader)
    except IngestError:
        raise
    except LimitReachedError as exc:
        # pypdf's own bounds (tokens per stream, decompressed bytes): a bomb, or an outsize file.
        log.info("pdf went past pypdf's limits: %r", exc)
        raise IngestError(
            f"{name} is too large to read: it holds more than Lookout's PDF reader allows."
        ) from exc
    except (
        PyPdfError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        OSError,
        RecursionError,
    ) as exc:
        # pypdf reports a damaged file through many exception types, not only its own.
        log.info("pdf could not be read: %r", exc)
        raise IngestError(f"{name} could not be read: it is damaged or not a PDF.") from exc
    return IngestResult(text="\n\n".join(page for page in pages if page))


def _find_catalog(reader: PdfReader, name: str) -> None:
    # Looked up first, so that giving up the search for a missing catalog reads as damage,
    # not as one of pypdf's size limits (both raise LimitReachedError).
    try:
        reader.root_object  # noqa: B018 - the lookup is the point
    except LimitReachedError as exc:
        raise IngestError(f"{name} could not be read: it is damaged or not a PDF.") from exc


def _read_pages(reader: PdfReader) -> list[str]:
    """Return the pages' texts, stopping at the limits with a note saying so."""
    total = len(reader.pages)
    texts: list[str] = []
    seen: set[object] = set()
    content_bytes = chars = 0
    for number, page in enumerate(reader.pages):
        if number == MAX_PAGES:
            texts.append(f"[Lookout read the first {MAX_PAGES} of {total} pages.]")
            break
        key = _contents_key(page)
        if key is not None and key in seen:
            continue  # drawn by the same stream as an earlier page: the same text again
        seen.add(key)
        contents = page.get_contents()
        content_bytes += len(contents.get_data()) if contents is not None else 0
        if content_bytes > MAX_CONTENT_BYTES:
            texts.append(
                f"[Lookout stopped at page {number + 1} of {total}: the pages hold too much.]"
            )
            break
        text = (page.extract_text() or "").strip()
        texts.append(text)
        chars += len(text)
        if chars > MAX_TEXT_CHARS:
            texts.append(
                f"[Lookout stopped at page {number + 1} of {total}: the text is too long.]"
            )
            break
    return texts


def _contents_key(page: PageObject) -> object:
    # The unresolved /Contents: the same indirect reference(s) mean the same content stream.
    raw = page.raw_get("/Contents") if "/Contents" in page else None
    if isinstance(raw, IndirectObject):
        return (raw.idnum, raw.generation)
    if isinstance(raw, ArrayObject):
        refs = tuple((r.idnum, r.generation) for r in raw if isinstance(r, IndirectObject))
        return refs if len(refs) == len(raw) else None
    return None


def _opens_without_password(reader: PdfReader) -> bool:
    # Many PDFs are encrypted only to restrict printing or copying, with an empty user password.
    try:
        return bool(reader.decrypt(""))
    except (PyPdfError, NotImplementedError):
        return False


def _describe(file: IngestInput) -> str:
    where = file.url or file.filename
    return f"The PDF {where}" if where else "The PDF"


class PdfIngester(Ingester):
    """Reads PDFs (``application/pdf``) with pypdf."""

    def __init__(self, priority: int = 0) -> None:
        super().__init__(id="pdf", priority=priority, accepts=accepts_pdf, ingest=ingest_pdf)


class PdfOptions(Schema):
    """The pdf plugin has no options."""


def setup(ctx: PluginContext) -> None:
    """Register the PDF ingester."""
    ctx.ingesters.register(PdfIngester())


plugin = Plugin(id="pdf", options_schema=PdfOptions, setup=setup)

__all__ = ["PdfIngester", "accepts_pdf", "ingest_pdf", "plugin"]
