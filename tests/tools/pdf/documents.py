"""Small real PDFs written by hand for tests: plain, encrypted, broken and hostile."""

from __future__ import annotations

import io
import zlib

from pypdf import PdfReader, PdfWriter


def make_pdf(pages: list[str]) -> bytes:
    """Return a valid PDF with one page per string, each drawn in Helvetica."""
    streams = [
        f"BT /F1 12 Tf 72 720 Td ({_escape(text)}) Tj ET".encode("latin-1") for text in pages
    ]
    return _write(streams, list(range(len(pages))))


def make_shared_stream_pdf(pages: int, operations: int) -> bytes:
    """Return a PDF of ``pages`` pages all drawn by one compressed stream of ``operations``
    text operations: small on disk, and a reader that parses it per page works for days."""
    stream = b"BT /F1 12 Tf 72 720 Td (again and again) Tj ET\n" * operations
    return _write([stream], [0] * pages, compress=True)


def make_dense_pdf(text: str) -> bytes:
    """Return a one-page PDF that draws ``text`` (ASCII) from one compressed stream: a few
    kilobytes on disk however long its text."""
    stream = b"BT /F1 12 Tf 72 720 Td (" + _escape(text).encode("ascii") + b") Tj ET"
    return _write([stream], [0], compress=True)


def make_damaged_pdf(objects: int) -> bytes:
    """Return a PDF with many objects, no cross-reference table and no catalog: its trailer
    names a /Root that does not exist, so a reader goes looking for one."""
    body = b"".join(
        b"%d 0 obj\n<< /Filler %d /Next %d 0 R >>\nendobj\n" % (n, n, n + 7)
        for n in range(1, objects)
    )
    trailer = b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n123\n%%%%EOF\n" % (
        objects * 10,
        objects * 10,
    )
    return b"%PDF-1.4\n" + body + trailer


def _write(streams: list[bytes], page_streams: list[int], compress: bool = False) -> bytes:
    """Return a PDF whose page ``i`` draws ``streams[page_streams[i]]`` in Helvetica."""
    pages = len(page_streams)
    first_stream = 3 + pages
    font = first_stream + len(streams)
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
    ]
    for index in page_streams:
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {font} 0 R >> >> "
            f"/Contents {first_stream + index} 0 R >>".encode()
        )
    for stream in streams:
        if compress:
            data = zlib.compress(stream, 9)
            objects.append(
                b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(data), data)
            )
        else:
            objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypt_pdf(data: bytes, user_password: str) -> bytes:
    """Return ``data`` encrypted (RC4, which pypdf writes without extra packages)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
