"""The bytes of a model's streamed answer, read from its socket below httpx when it can be.

A server streams each token as one HTTP chunk, and the client reads each with one ``recv``.
Through httpx every such read passed four generator layers, httpcore's event loop and h11's
parser: a third of a streamed token's CPU. ``body_chunks`` reads an HTTP/1.1 chunked body
itself instead: one ``recv`` and a few byte operations per chunk. h11 keeps the connection's
state for httpx's pool: once the body is read to its end, h11 is handed the rest of the chunk
its buffer ends in and the last chunk (the body's framing, not all of it), so that the
connection goes back to the pool. An answer ends at ``[DONE]``, a chunk before the body's
last: ``finish`` reads that last bit when it is short and comes at once (``REST_BYTES``,
``REST_SECONDS``), else the connection closes with the response, as httpx closed one whose
body was left unread. Any other body (one with a length or none, HTTP/2, a compressed one,
one through a proxy's TLS inside TLS, an httpx whose insides moved) is read through httpx,
and its connection closes when it is left before its end.

Errors are httpx's: ``httpx2.ReadTimeout`` after ``timeout`` seconds of silence,
``httpx2.ReadError`` for a broken socket, ``httpx2.RemoteProtocolError`` for a body cut short
or framed wrong.
"""

from __future__ import annotations

import os
import re
import select
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any

import h11
import httpx2

# The most of a body's first reads kept until they hold the end of the chunk h11's buffer ends
# in (past it, the connection is not reused).
KEPT_BYTES = 64 * 1024
# The most of a body left after the answer's end that is read for the connection's sake, and
# how long it may take to come: a server that keeps the body open costs no more.
REST_BYTES = 4 * 1024
REST_SECONDS = 0.2
READ_BYTES = 64 * 1024
# A chunk's size line: hex digits, then maybe extensions (``;name=value``), which are ignored.
_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})[ \t]*(?:;[^\r\n]*)?")
_MAX_LINE = 16 * 1024  # h11's bound on a line it waits for
_LAST_CHUNK = b"0\r\n\r\n"


def body_chunks(response: httpx2.Response) -> ChunkedBody | HttpxBody:
    """Return the response's body as it arrives: raw unless the server compressed it."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding != "identity":
        return HttpxBody(response.iter_bytes())
    reader = ChunkedBody.of(response)
    return HttpxBody(response.iter_raw()) if reader is None else reader


class HttpxBody:
    """A body read through httpx: left before its end, its connection closes."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def ready(self, seconds: float) -> bool:
        """Whether more of the body came within ``seconds``: not known through httpx, so
        read at once."""
        return True

    def finish(self) -> None:
        """Leave the rest: httpx's read timeout cannot be shortened for it."""


class ChunkedBody:
    """Reads one chunked body from the connection's socket."""

    def __init__(
        self, response: httpx2.Response, http: h11.Connection, sock: socket.socket
    ) -> None:
        self.response = response
        self.http = http
        self.sock = sock
        self.timeout = response.request.extensions.get("timeout", {}).get("read")
        self.head = http.trailing_data[0]  # what came with the headers: h11 holds it already
        self.kept: list[bytes] | None = []  # the first reads, until ``ending`` is found
        self.kept_bytes = 0
        self.ending: bytes | None = None  # what h11 needs after ``head`` to see the body end
        self.rest_until: float | None = None  # set by ``finish``
        self.rest_bytes = 0
        self.direct = False  # read by os.read first (``_ready_bytes``)
        self._reading = self._chunks_then_close()

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

    def __iter__(self) -> Iterator[bytes]:
        """The body's data as it arrives, chunk by chunk; the response closes after."""
        return self._reading

    def ready(self, seconds: float) -> bool:
        """Whether the socket holds bytes to read (or its end) within ``seconds``."""
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return True  # decrypted already, where poll cannot see them
        poller = select.poll()  # not select(): a worker's descriptors may pass 1024
        try:
            poller.register(self.sock, select.POLLIN)
            return bool(poller.poll(seconds * 1000))
        except (OSError, ValueError):  # closed meanwhile: the read says how
            return True

    def finish(self) -> None:
        """Read what is left of the body when it is short and comes at once, so that its
        connection goes back to the pool; else close it. Never raises."""
        self.rest_until = time.monotonic() + REST_SECONDS
        try:
            for _ in self._reading:
                pass
        except (httpx2.HTTPError, _TooLong):
            pass  # the response closed with the reader: the connection is not reused

    def _chunks_then_close(self) -> Iterator[bytes]:
        try:
            yield from self._chunks()
        finally:
            self.response.close()

    def _chunks(self) -> Iterator[bytes]:
        """The chunks' data as read: the whole chunks one read holds joined, else pieces.

        ``at`` is where the unread part of ``buffer`` starts: a read holding many small chunks
        is not copied again for each of them. Their data is yielded as one: chunk boundaries
        mean nothing to an event stream, and a reader that reads seldom (the worker's provider
        waits ``read_interval`` between reads) gets a read's tokens in one piece.
        """
        self.sock.settimeout(self.timeout)
        # A plain socket (TLS must go through its object) that its timeout made non-blocking
        # (without one, os.read would wait with no bound).
        self.direct = not isinstance(self.sock, ssl.SSLSocket) and not os.get_blocking(
            self.sock.fileno()
        )
        buffer, at = self.head, 0
        whole: list[bytes] = []
        while True:
            end = buffer.find(b"\r\n", at)
            if end < 0 and whole:
                yield b"".join(whole)
                whole = []
            while end < 0:
                buffer, at = self._more(buffer[at:]), 0
                end = buffer.find(b"\r\n")
            size = _chunk_size(buffer[at:end])
            start = end + 2
            if size == 0:
                break
            stop = start + size
            if buffer[stop : stop + 2] == b"\r\n":  # the whole chunk came in one read
                whole.append(buffer[start:stop])
                at = stop + 2
                continue
            if whole:
                yield b"".join(whole)
                whole = []
            buffer, at = buffer[start:], 0
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
        if whole:
            yield b"".join(whole)
        buffer, at = buffer[start:], 0
        trailers = 0
        while True:  # trailers, up to an empty line
            end = buffer.find(b"\r\n", at)
            while end < 0:
                buffer, at = self._more(buffer[at:]), 0
                end = buffer.find(b"\r\n")
            trailers += end + 2 - at
            if trailers > _MAX_LINE:  # else a server could send trailer lines for ever
                raise httpx2.RemoteProtocolError("The body's trailers are too long.")
            if end == at:
                break
            at = end + 2
        self._settle()

    def _more(self, buffer: bytes) -> bytes:
        """Return ``buffer`` with the next read added; raise at the end of the stream."""
        if len(buffer) > _MAX_LINE:
            raise httpx2.RemoteProtocolError("The body's chunk framing is malformed.")
        size = READ_BYTES
        if self.rest_until is not None:  # after the answer: bounded in bytes and time
            size = min(size, REST_BYTES - self.rest_bytes)
            left = self.rest_until - time.monotonic()
            if size <= 0 or left <= 0:
                raise _TooLong
            self.sock.settimeout(left)
        try:
            data = self._ready_bytes(size) or self.sock.recv(size)
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            raise httpx2.ReadError(str(exc)) from exc
        if not data:
            raise httpx2.RemoteProtocolError(
                "peer closed connection without sending complete message body: "
                "incomplete chunked read"
            )
        if self.rest_until is not None:
            self.rest_bytes += len(data)
        if self.kept is not None:
            self._keep(data)
        return buffer + data if buffer else data

    def _ready_bytes(self, size: int) -> bytes | None:
        """Return up to ``size`` bytes the socket holds already (b"" at its end), else None.

        A socket with a timeout is non-blocking underneath, and its ``recv`` polls before
        every read: one system call more a read, though a paced read finds its tokens waiting.
        ``os.read`` reads it at once. The descriptor is asked for each time (-1 once closed:
        the read fails as ``recv`` would, never on a descriptor reused since)."""
        if not self.direct:
            return None
        try:
            return os.read(self.sock.fileno(), size)
        except BlockingIOError:
            return None

    def _keep(self, data: bytes) -> None:
        """Keep a first read until the kept reads hold ``ending``, or more than KEPT_BYTES."""
        assert self.kept is not None
        self.kept.append(data)
        self.kept_bytes += len(data)
        self.ending = _ending(self.head, b"".join(self.kept))
        if self.ending is not None or self.kept_bytes > KEPT_BYTES:
            self.kept = None

    def _settle(self) -> None:
        """Hand h11 the end of the body's framing, so that the pool may reuse the connection.

        Framing this reader took but h11 would not (it is stricter about extensions and
        trailers) costs the connection, not the answer already streamed.
        """
        if self.ending is not None:
            ending = self.ending
        elif self.kept is not None:  # the last chunk came with the headers: all that followed
            ending = b"".join(self.kept)
        else:
            return
        if ending:  # never b"": to h11 that says the connection closed
            self.http.receive_data(ending)
        try:
            while self.http.next_event() not in (h11.NEED_DATA, h11.PAUSED):
                pass
        except h11.RemoteProtocolError:
            pass


class _TooLong(Exception):
    """What is left of a body after the answer's end is longer or slower than its bounds."""


def _ending(head: bytes, after: bytes) -> bytes | None:
    """Return what h11, holding the body's first bytes ``head``, needs to see the body end:
    the bytes of ``after`` up to the end of the chunk ``head`` ends in, then the last chunk.

    None while ``after`` does not reach that far, when the last chunk starts in ``head``
    (then h11 needs all that follows) and when the framing does not parse.
    """
    data = head + after if head else after
    position = 0
    while position < len(head):
        end = data.find(b"\r\n", position)
        if end < 0:
            return None
        try:
            size = _chunk_size(data[position:end])
        except httpx2.RemoteProtocolError:
            return None
        if size == 0:
            return None
        position = end + 4 + size
    if position > len(data):
        return None
    return data[len(head) : position] + _LAST_CHUNK


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
