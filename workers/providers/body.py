"""The bytes of a model's streamed answer, read from its socket below httpx when it can be.

A server streams each token as one HTTP chunk, and the client reads each with one ``recv``.
Through httpx every such read passed four generator layers, httpcore's event loop and h11's
parser: a third of a streamed token's CPU. ``body_chunks`` reads an HTTP/1.1 chunked body
itself instead: one ``recv`` and a few byte operations per chunk. h11 keeps the connection's
state for httpx's pool; a body read to its end within ``KEPT_BYTES`` is handed to h11 whole
then, so that its connection goes back to the pool as before. A longer one, and one left
before its end (the usual case: the answer ends at ``[DONE]``), closes its connection, as
httpx did with a body left unread. Any other body (one with a length or none, HTTP/2, a
compressed one, one through a proxy's TLS inside TLS, an httpx whose insides moved) is read
through httpx.

Errors are httpx's: ``httpx2.ReadTimeout`` after ``timeout`` seconds of silence,
``httpx2.ReadError`` for a broken socket, ``httpx2.RemoteProtocolError`` for a body cut short
or framed wrong.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any

import h11
import httpx2

# The most of a body kept for h11 to parse at its end (past it, the connection is not reused).
KEPT_BYTES = 64 * 1024
READ_BYTES = 64 * 1024
# A chunk's size line: hex digits, then maybe extensions (``;name=value``), which are ignored.
_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})[ \t]*(?:;[^\r\n]*)?")
_MAX_LINE = 16 * 1024  # h11's bound on a line it waits for


def body_chunks(response: httpx2.Response) -> Iterator[bytes]:
    """Return the response's body as it arrives: raw unless the server compressed it."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding != "identity":
        return response.iter_bytes()
    reader = ChunkedBody.of(response)
    return response.iter_raw() if reader is None else reader.chunks()


class ChunkedBody:
    """Reads one chunked body from the connection's socket."""

    def __init__(
        self, response: httpx2.Response, http: h11.Connection, sock: socket.socket
    ) -> None:
        self.response = response
        self.http = http
        self.sock = sock
        self.timeout = response.request.extensions.get("timeout", {}).get("read")
        self.kept: list[bytes] | None = []  # what was read, for h11 at the end
        self.kept_bytes = 0

    @classmethod
    def of(cls, response: httpx2.Response) -> ChunkedBody | None:
        """Return a reader for the response's body, or None when httpx must read it."""
        if "chunked" not in response.headers.get("transfer-encoding", "").lower():
            return None
        stream = response.extensions.get("network_stream")
        http = _h11_connection(response)
        if stream is None or http is None or http.their_state is not h11.SEND_BODY:
            return None
        if type(stream).__name__ != "SyncStream":  # e.g. TLS inside a proxy's TLS
            return None
        sock = stream.get_extra_info("socket")
        if not isinstance(sock, socket.socket):
            return None
        return cls(response, http, sock)

    def chunks(self) -> Iterator[bytes]:
        """Yield the body's data as it arrives, chunk by chunk; the response closes after."""
        try:
            yield from self._chunks()
        finally:
            self.response.close()

    def _chunks(self) -> Iterator[bytes]:
        """The chunks' data as read: whole chunks when one read holds them, else pieces."""
        self.sock.settimeout(self.timeout)
        buffer = self.http.trailing_data[0]  # what came with the headers: h11 holds it already
        while True:
            end = buffer.find(b"\r\n")
            while end < 0:
                buffer = self._more(buffer)
                end = buffer.find(b"\r\n")
            size = _chunk_size(buffer[:end])
            start = end + 2
            if size == 0:
                break
            stop = start + size
            if buffer[stop : stop + 2] == b"\r\n":  # the whole chunk came in one read
                yield buffer[start:stop]
                buffer = buffer[stop + 2 :]
                continue
            buffer = buffer[start:]
            while size:
                if not buffer:
                    buffer = self._more(buffer)
                piece = buffer[:size]
                buffer = buffer[size:]
                size -= len(piece)
                yield piece
            while len(buffer) < 2:
                buffer = self._more(buffer)
            if buffer[:2] != b"\r\n":
                raise httpx2.RemoteProtocolError("A chunk of the body did not end with CRLF.")
            buffer = buffer[2:]
        buffer = buffer[start:]
        while True:  # trailers, up to an empty line
            end = buffer.find(b"\r\n")
            while end < 0:
                buffer = self._more(buffer)
                end = buffer.find(b"\r\n")
            line, buffer = buffer[:end], buffer[end + 2 :]
            if not line:
                break
        self._settle()

    def _more(self, buffer: bytes) -> bytes:
        """Return ``buffer`` with the next read added; raise at the end of the stream."""
        if len(buffer) > _MAX_LINE:
            raise httpx2.RemoteProtocolError("The body's chunk framing is malformed.")
        try:
            data = self.sock.recv(READ_BYTES)
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            raise httpx2.ReadError(str(exc)) from exc
        if not data:
            raise httpx2.RemoteProtocolError(
                "peer closed connection without sending complete message body: "
                "incomplete chunked read"
            )
        if self.kept is not None:
            self.kept.append(data)
            self.kept_bytes += len(data)
            if self.kept_bytes > KEPT_BYTES:
                self.kept = None
        return buffer + data if buffer else data

    def _settle(self) -> None:
        """Hand h11 the body read to its end, so that the pool may reuse the connection.

        Framing this reader took but h11 would not (it is stricter about extensions and
        trailers) costs the connection, not the answer already streamed.
        """
        if self.kept is None:
            return
        if self.kept:  # never b"": to h11 that says the connection closed
            self.http.receive_data(b"".join(self.kept))
        try:
            while self.http.next_event() not in (h11.NEED_DATA, h11.PAUSED):
                pass
        except h11.RemoteProtocolError:
            pass


def _chunk_size(line: bytes) -> int:
    """Return the size a chunk's size line gives; raise for a malformed one."""
    if line.isalnum() and len(line) <= 20 and line[1:2] not in (b"x", b"X"):
        try:  # most lines: hex digits alone (int() would take "0x1f")
            return int(line, 16)
        except ValueError:
            pass
    match = _SIZE.fullmatch(line)
    if match is None:
        raise httpx2.RemoteProtocolError(f"The body has a malformed chunk size line: {line!r}")
    return int(match.group(1), 16)


def _h11_connection(response: httpx2.Response) -> h11.Connection | None:
    """Return the h11 state of the connection the response is read from, or None.

    The path runs through httpx's and httpcore's private attributes (their public API has no
    way to hand the body's reading over); ``tests/workers/test_provider_body.py`` fails when
    an upgrade moves them, and this falls back to httpx meanwhile.
    """
    holder: Any = response.stream
    for name in ("_stream", "_httpcore_stream", "_stream", "_connection", "_h11_state"):
        holder = getattr(holder, name, None)
        if holder is None:
            return None
    return holder if isinstance(holder, h11.Connection) else None
