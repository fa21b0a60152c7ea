"""Event streams read over raw non-blocking sockets, so that a test or a benchmark can hold
hundreds of them in one thread, or hold one and never read it."""

from __future__ import annotations

import selectors
import socket
from collections.abc import Callable, Iterable
from time import monotonic

from tests.support.chat import Event, parse_sse


class RawStream:
    """One GET of a turn's events: its status, headers and the events read so far. Every
    stream opened is kept in ``opened`` until ``close_all``, so that a test that fails before
    hanging up leaves no socket for a later test's garbage collection to warn of."""

    opened: list[RawStream] = []

    def __init__(
        self,
        base_url: str,
        turn_id: str,
        token: str,
        last_event_id: str | None = None,
        receive_buffer: int | None = None,
    ) -> None:
        host, port = base_url.removeprefix("http://").rsplit(":", 1)
        self.sock = socket.socket()
        RawStream.opened.append(self)
        if receive_buffer is not None:  # before connecting, so that the window stays small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect((host, int(port)))
        resume = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
        self.sock.sendall(
            f"GET /api/turns/{turn_id}/events HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {token}\r\nConnection: close\r\n{resume}\r\n".encode()
        )
        self.sock.setblocking(False)
        self.raw = bytearray()
        self.ended = False  # the server closed the connection

    def pump(self) -> None:
        """Read what has arrived, without waiting."""
        while not self.ended:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return
            except ConnectionError:
                data = b""
            if not data:
                self.ended = True
                self.sock.close()
            self.raw += data

    def close(self) -> None:
        """Hang up."""
        self.ended = True
        self.sock.close()

    @classmethod
    def close_all(cls) -> None:
        """Hang up every stream opened since the last call."""
        while cls.opened:
            cls.opened.pop().close()

    @property
    def head(self) -> str:
        """The status line and headers, once they arrived."""
        head, _, _ = bytes(self.raw).partition(b"\r\n\r\n")
        return head.decode("latin-1")

    @property
    def status(self) -> int | None:
        """The response's status code, None until it arrived."""
        if b"\r\n\r\n" not in self.raw:
            return None
        return int(self.head.split(" ", 2)[1])

    @property
    def header(self) -> dict[str, str]:
        """The response's headers, names in lower case."""
        lines = self.head.split("\r\n")[1:]
        return {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines)}

    @property
    def body(self) -> str:
        """The body read so far, chunked framing removed when the response used it."""
        raw = bytes(self.raw)
        start = raw.find(b"\r\n\r\n") + 4
        if self.header.get("transfer-encoding") != "chunked":
            return raw[start:].decode()
        text = bytearray()
        while (line_end := raw.find(b"\r\n", start)) != -1:
            length = int(raw[start:line_end], 16)
            if length == 0 or len(raw) < line_end + 2 + length + 2:
                break
            text += raw[line_end + 2 : line_end + 2 + length]
            start = line_end + 2 + length + 2
        return text.decode()

    @property
    def events(self) -> list[Event]:
        """The complete events read so far."""
        body = self.body
        return list(parse_sse(body[: body.rfind("\n\n") + 2].split("\n")))

    @property
    def kept_alive(self) -> bool:
        """Whether a keep-alive comment arrived (the server serves the stream)."""
        return ": keep-alive" in self.body


def pump_until(
    streams: Iterable[RawStream], done: Callable[[], bool], timeout: float, message: str
) -> None:
    """Read every stream as data arrives until ``done()``; TimeoutError with ``message`` else."""
    streams = list(streams)
    selector = selectors.DefaultSelector()
    for stream in streams:
        if not stream.ended:
            selector.register(stream.sock, selectors.EVENT_READ, stream)
    try:
        deadline = monotonic() + timeout
        while not done():
            if monotonic() > deadline:
                raise TimeoutError(message)
            for key, _ in selector.select(0.2):
                key.data.pump()
                if key.data.ended:
                    selector.unregister(key.fileobj)
    finally:
        selector.close()
