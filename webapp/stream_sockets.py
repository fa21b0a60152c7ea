"""The sockets of the event streams a web process's hub serves, written without a thread each.

A ``Client`` is one claimed connection: a write goes straight to the non-blocking socket, and what
the socket does not take waits in the client's own buffer, capped at ``BUFFER_BYTES``: a client
that does not read is dropped, never buffered without end. One ``SocketLoop`` thread per process
flushes those buffers when their sockets can take more, notices clients that hang up, and closes
sockets; other threads ask it through a queue and a wake-up pipe.
"""

from __future__ import annotations

import logging
import os
import selectors
import socket
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

# What one slow reader may hold of this process's memory: a few hundred events of a reply.
BUFFER_BYTES = 256 * 1024
# HTTP/1.1 chunked framing: each event is one chunk, the empty chunk ends the body.
LAST_CHUNK = b"0\r\n\r\n"


# Framing headers the hub writes itself, whatever the app said.
_FRAMING = {"content-length", "transfer-encoding", "connection"}


def response_head(status: str, headers: list[tuple[str, str]]) -> bytes:
    """Return an HTTP/1.1 status line and headers for a chunked body that ends the connection."""
    lines = [f"HTTP/1.1 {status}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() not in _FRAMING]
    lines += ["Transfer-Encoding: chunked", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1")


def chunk(data: bytes) -> bytes:
    """Return ``data`` framed as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class Client:
    """One claimed connection: bounded writes, then an orderly close."""

    __slots__ = ("sock", "loop", "buffer", "lock", "closed", "ending", "on_gone", "watching")

    def __init__(self, sock: socket.socket, loop: SocketLoop, on_gone: Callable[[], None]) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.loop = loop
        self.buffer = bytearray()
        self.lock = threading.Lock()
        self.closed = False
        self.ending = False  # close once the buffer is written
        self.on_gone = on_gone  # called once, when the client hung up or was dropped
        self.watching = False  # the loop waits for the socket to take more

    def send(self, data: bytes) -> bool:
        """Write ``data`` or buffer it; False when the client is gone (or just dropped)."""
        with self.lock:
            if self.closed or self.ending:
                return False
            if not self.buffer:
                try:
                    data = data[self.sock.send(data) :]
                except BlockingIOError:
                    pass
                except OSError:
                    self.loop.close(self)
                    return False
                if not data:
                    return True
            if len(self.buffer) + len(data) > BUFFER_BYTES:
                log.info("dropped an event stream whose client stopped reading")
                self.loop.close(self)
                return False
            self.buffer += data
            if not self.watching:
                self.watching = True
                self.loop.ask("write", self)
            return True

    def finish(self, last: bytes = b"") -> None:
        """Send ``last`` and the end of the body, then close the connection."""
        self.send(last + LAST_CHUNK)
        with self.lock:
            self.ending = True
            if self.buffer:
                return  # the loop closes it once the buffer is written
        self.loop.close(self)

    def flush(self) -> bool:
        """Write what the buffer holds; True once it is empty (called by the loop)."""
        with self.lock:
            try:
                sent = self.sock.send(self.buffer)
            except BlockingIOError:
                return False
            except OSError:
                self.buffer.clear()
                return True
            del self.buffer[:sent]
            return not self.buffer


class SocketLoop:
    """One thread waiting on every claimed socket: flushes, hang-ups and closes."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.requests: list[tuple[str, Client]] = []
        self.lock = threading.Lock()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        self.selector.register(self.wake_read, selectors.EVENT_READ, None)
        self.thread = threading.Thread(target=self.run, name="event-stream-sockets", daemon=True)
        self.thread.start()

    def ask(self, what: str, client: Client) -> None:
        """Ask the loop to ``watch`` a new client, wait until it can ``write``, or ``close`` it."""
        with self.lock:
            self.requests.append((what, client))
        try:
            os.write(self.wake_write, b"x")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups already

    def close(self, client: Client) -> None:
        """Close the client's connection soon (from any thread)."""
        client.closed = True
        self.ask("close", client)

    def run(self) -> None:
        """Serve requests and socket readiness until the process exits."""
        while True:
            for key, mask in self.selector.select():
                client = key.data
                if client is not None and client.sock.fileno() == -1:
                    continue  # dropped by an earlier request of this same round
                if client is None:
                    os.read(self.wake_read, 4096)
                    self.take_requests()
                elif mask & selectors.EVENT_READ and self.hung_up(client):
                    self.drop(client)
                elif mask & selectors.EVENT_WRITE and client.flush():
                    self.written(client)

    def take_requests(self) -> None:
        with self.lock:
            requests, self.requests = self.requests, []
        for what, client in requests:
            if what == "close":
                self.drop(client)
            elif client.closed:
                continue
            elif what == "watch":
                self.selector.register(client.sock, selectors.EVENT_READ, client)
            else:
                self.selector.modify(
                    client.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, client
                )

    def hung_up(self, client: Client) -> bool:
        """Whether the client closed its side (what else it sends is read and ignored)."""
        try:
            return not client.sock.recv(4096)
        except BlockingIOError:
            return False
        except OSError:
            return True

    def written(self, client: Client) -> None:
        with client.lock:
            client.watching = False
            ending = client.ending
        if ending:
            self.drop(client)
        elif not client.closed:
            self.selector.modify(client.sock, selectors.EVENT_READ, client)

    def drop(self, client: Client) -> None:
        """Close the client's socket once, and tell its owner."""
        if client.sock.fileno() == -1:
            return
        try:
            self.selector.unregister(client.sock)
        except (KeyError, ValueError):
            pass
        client.closed = True
        try:
            client.sock.shutdown(socket.SHUT_WR)  # what was written arrives before the end
        except OSError:
            pass
        client.sock.close()
        client.on_gone()
