"""The network guard for MCP servers over HTTP: each connection goes where the policy allows.

The SDK talks HTTP with ``httpx2``; its connection pool opens sockets through a network backend,
so the guard is a backend that resolves the host itself, asks the address policy about every
address, and connects to an allowed one by its number (TLS still checks the host's name). A
refusal is kept on the backend, so the caller can say why the server could not be reached.

The transport also reads half a UTF-16 pair in a server's JSON (``"\\ud83d"``, an emoji a server
cut in two) as U+FFFD, as the rest of Lookout reads JSON (``tools.charset.loads_json``): the
SDK's parser refuses such a message, and the call failed as a server that "could not be reached".
It holds each body, each event and all of a session's bodies to ``tools.mcp.limits``: the SDK
reads a JSON body whole, and this transport held a line of an event stream until it ended.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import httpcore2
import httpx2
from httpcore2._backends.anyio import AnyIOBackend
from httpcore2._backends.base import AsyncNetworkStream

from tools.addresses import AddressPolicy
from tools.charset import loads_json
from tools.mcp.limits import AnswerLimit, AnswerTooLarge

# The SDK's own defaults: a server may hold a response stream open for long.
CONNECT_SECONDS = 10.0
# Half a UTF-16 pair written as a JSON escape (a whole pair matches too: it is mended unchanged).
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class GuardedBackend(AnyIOBackend):
    """Connects only to addresses ``address_allowed`` accepts; ``refusal`` says why it did not."""

    def __init__(self, address_allowed: AddressPolicy) -> None:
        self.address_allowed = address_allowed
        self.refusal: str | None = None

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncNetworkStream:
        """Connect to the first allowed address of ``host``; raise ``httpcore2.ConnectError``
        when it has none."""
        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore2.ConnectError(f"{host} could not be resolved: {exc}") from exc
        addresses = [str(info[4][0]) for info in infos]
        allowed = [a for a in addresses if self.address_allowed(a)]
        if not allowed:
            self.refusal = (
                f"{host} resolves to {', '.join(dict.fromkeys(addresses))}, a private or "
                "reserved address"
            )
            raise httpcore2.ConnectError(self.refusal)
        return await super().connect_tcp(
            allowed[0],
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )


def mend_json(data: bytes) -> bytes:
    """Return JSON ``data`` with each lone surrogate read as U+FFFD; ``data`` itself when it
    holds no surrogate escape or does not parse (the SDK then says it could not read it)."""
    if SURROGATE_ESCAPE.search(data) is None:
        return data
    try:
        value = loads_json(data)
    except (ValueError, RecursionError):  # nested deeper than json reads: passed on as it came
        return data
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _mend_lines(lines: bytes, prefix: bytes) -> bytes:
    """Return complete lines with the JSON of each line that starts with ``prefix`` mended."""
    if SURROGATE_ESCAPE.search(lines) is None:
        return lines
    mended = []
    for line in lines.splitlines(keepends=True):
        if line.startswith(prefix):
            body = mend_json(line[len(prefix) :].strip())
            line = prefix + (b" " if prefix else b"") + body + line[len(line.rstrip(b"\r\n")) :]
        mended.append(line)
    return b"".join(mended)


class BoundedLines:
    """Lines read from a stream in chunks, passed on mended as soon as they end. The answer
    under way (an event stream's event so far, else the line so far) is held to ``limit``."""

    def __init__(self, limit: AnswerLimit, events: bool) -> None:
        self.limit = limit
        self.prefix = b"data:" if events else b""
        self.events = events
        self.pending = bytearray()
        self.event = 0  # the bytes of the message under way that were passed on

    def feed(self, chunk: bytes) -> bytes:
        """Return the lines ``chunk`` ends; raise ``AnswerTooLarge`` past a limit."""
        self.pending += chunk
        ended = self.pending.rfind(b"\n") + 1 if b"\n" in chunk else 0
        lines = bytes(self.pending[:ended])
        del self.pending[:ended]
        # Each line end found by memchr: bytes.count and a search for "\n\n" walk the bytes
        # one by one (a millisecond a megabyte), and a message has a few lines.
        ends = since = start = 0  # messages ended; where the one under way began
        while (end := lines.find(b"\n", start)) >= 0:
            if not self.events or end == start or (end == start + 1 and lines[start] == 13):
                ends += 1  # a stdio line, or the blank line that ends an event
                since = end + 1
            start = end + 1
        self.event = len(lines) - since if ends else self.event + len(lines)
        self.limit.count(len(chunk), self.event + len(self.pending), ends)
        return _mend_lines(lines, self.prefix) if lines else b""

    def rest(self) -> bytes:
        """Return what came after the last line, mended."""
        rest = bytes(self.pending)
        self.pending.clear()
        return _mend_lines(rest, self.prefix) if rest else b""


class _MendedStream(httpx2.AsyncByteStream):
    """A response body passed on with lone surrogates mended, held to ``limit``: a JSON body
    whole, an event stream line by line (each line as soon as it ends, as the SDK's event
    reader needs it)."""

    def __init__(self, stream: httpx2.AsyncByteStream, events: bool, limit: AnswerLimit) -> None:
        self.stream = stream
        self.events = events
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            if self.events:
                lines = BoundedLines(self.limit, events=True)
                async for chunk in self.stream:
                    if ended := lines.feed(chunk):
                        yield ended
                if rest := lines.rest():
                    yield rest
                return
            pending = bytearray()
            async for chunk in self.stream:
                pending += chunk
                self.limit.count(len(chunk), len(pending))
        except AnswerTooLarge as exc:
            # The SDK ends the request with a stream error at once (the caller words it).
            raise httpx2.StreamError(str(exc)) from exc
        if pending:
            yield mend_json(bytes(pending))

    async def aclose(self) -> None:
        await self.stream.aclose()


class MendingTransport(httpx2.AsyncHTTPTransport):
    """An HTTP transport whose JSON and event-stream bodies come with lone surrogates mended,
    each body and all of them held to ``limit``."""

    def __init__(self, limit: AnswerLimit) -> None:
        super().__init__(trust_env=False)
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Return the response, its body to be mended and counted as it is read."""
        response = await super().handle_async_request(request)
        kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        events = kind == "text/event-stream"
        if kind == "application/json" or events:
            response.stream = _MendedStream(response.stream, events, self.limit)
        return response


def make_http_client(
    headers: dict[str, str], backend: GuardedBackend, read_seconds: float, limit: AnswerLimit
) -> httpx2.AsyncClient:
    """Return an HTTP client for one MCP session whose connections go through ``backend`` and
    whose answers are held to ``limit``."""
    transport = MendingTransport(limit)
    # httpx2 takes no network backend of its own: its pool is rebuilt around the guard.
    transport._pool = httpcore2.AsyncConnectionPool(  # noqa: SLF001
        ssl_context=transport._pool._ssl_context,  # noqa: SLF001
        network_backend=backend,
    )
    timeout = httpx2.Timeout(read_seconds, connect=CONNECT_SECONDS)
    # Bodies as sent, so that the transport reads the JSON a compressed body would hide.
    headers = {"Accept-Encoding": "identity", **headers}
    return httpx2.AsyncClient(
        transport=transport, headers=headers, timeout=timeout, trust_env=False
    )
