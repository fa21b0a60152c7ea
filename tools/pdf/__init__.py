"""The pdf plugin: an ingester that reads the text of every page of a PDF with pypdf.

``PdfIngester.ingest`` raises ``IngestError`` for an encrypted PDF that needs a password and for
a file pypdf cannot read (damaged, or not a PDF at all); no pypdf exception escapes.
"""

from __future__ import annotations

import io
import logging

from marshmallow import Schema
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from tools.api import Ingester, IngestError, IngestInput, IngestResult, Plugin, PluginContext

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
log = logging.getLogger(__name__)


def accepts_pdf(mime_type: str) -> bool:
    """Whether ``mime_type`` (bare, lowercase) is a PDF."""
    return mime_type in PDF_TYPES


def ingest_pdf(file: IngestInput) -> IngestResult:
    """Return the text of every page, pages separated by a blank line."""
    name = _describe(file)
    try:
        reader = PdfReader(io.BytesIO(file.data))
        if reader.is_encrypted and not _opens_without_password(reader):
            raise IngestError(
                f"{name} is encrypted with a password, so Lookout cannot read its text."
            )
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except IngestError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        # pypdf reports a damaged file through many exception types, not only its own.
        log.info("pdf could not be read: %r", exc)
        raise IngestError(f"{name} could not be read: it is damaged or not a PDF.") from exc
    return IngestResult(text="\n\n".join(page for page in pages if page))


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
