"""The PDF ingester: the text of every page, and clear errors for encrypted or broken files."""

from __future__ import annotations

import pytest

from tests.tools.pdf.documents import encrypt_pdf, make_pdf, make_shared_stream_pdf
from tools.api import IngesterRegistry, IngestError, IngestInput
from tools.host import start
from tools.pdf import PdfIngester, ingest_pdf, plugin

URL = "https://example.com/report.pdf"


def test_the_text_of_every_page_is_returned():
    data = make_pdf(["Page one (intro)", "Page two", "Page three"])
    result = PdfIngester().ingest(IngestInput(data, "application/pdf", "report.pdf", URL))
    assert result.text == "Page one (intro)\n\nPage two\n\nPage three"


def test_only_pdf_types_are_accepted():
    ingester = PdfIngester()
    assert ingester.accepts("application/pdf")
    assert ingester.accepts("application/x-pdf")
    assert not ingester.accepts("application/zip")
    assert not ingester.accepts("text/html")


def test_an_encrypted_pdf_is_a_clear_error():
    data = encrypt_pdf(make_pdf(["secret plans"]), user_password="hunter2")
    with pytest.raises(IngestError) as error:
        PdfIngester().ingest(IngestInput(data, "application/pdf", None, URL))
    assert error.value.message == (
        f"The PDF {URL} is encrypted with a password, so Lookout cannot read its text."
    )


def test_a_pdf_encrypted_with_an_empty_password_is_read():
    data = encrypt_pdf(make_pdf(["printing restricted only"]), user_password="")
    result = PdfIngester().ingest(IngestInput(data, "application/pdf", None, URL))
    assert result.text == "printing restricted only"


@pytest.mark.parametrize(
    "data",
    [b"", b"not a pdf at all", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", make_pdf(["x"])[:200]],
    ids=["empty", "text", "truncated header", "truncated file"],
)
def test_a_broken_file_is_a_clear_error(data):
    with pytest.raises(IngestError) as error:
        PdfIngester().ingest(IngestInput(data, "application/pdf", "broken.pdf"))
    assert (
        error.value.message == "The PDF broken.pdf could not be read: it is damaged or not a PDF."
    )


def test_the_plugin_registers_the_ingester_for_every_plugin():
    shared = IngesterRegistry()
    start(plugin, {}, shared, "Lookout", "http://localhost:5000")
    assert shared.accepts("application/pdf")
    assert shared.accepts("Application/PDF; name=report.pdf")
    assert plugin.id == "pdf"


def test_a_pdf_past_the_readers_limits_is_too_large_not_damaged():
    """pypdf's LimitReachedError (here: too many tokens in one stream) read as "damaged"."""
    with pytest.raises(IngestError) as error:
        ingest_pdf(IngestInput(make_shared_stream_pdf(1, 400_000), "application/pdf", "big.pdf"))
    assert error.value.message == (
        "The PDF big.pdf is too large to read: it holds more than Lookout's PDF reader allows."
    )
