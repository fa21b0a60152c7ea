"""The network guard for MCP servers over HTTP: each connection goes where the policy allows.

The SDK talks HTTP with ``httpx2``; its connection pool opens sockets through a network backend,
so the guard is a backend that resolves the host itself, asks the address policy about every
address, and connects to an allowed one by its number (TLS still checks the host's name). A
refusal is kept on the backend, so the caller can say why the server could not be reached.

The transport also reads half a UTF-16 pair in a server's JSON (``"\\ud83d"``, an emoji a server
cut in two) as U+FFFD, as the rest of Lookout reads JSON (``tools.charset.loads_json``): the
SDK's parser refuses such a message, and the call failed as a server that "could not be reached".
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
    except ValueError:
        return data
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _mend_events(lines: bytes) -> bytes:
    """Return complete lines of an event stream with each ``data:`` line's JSON mended."""
    if SURROGATE_ESCAPE.search(lines) is None:
        return lines
    mended = []
    for line in lines.splitlines(keepends=True):
        if line.startswith(b"data:"):
            body = line[5:].strip()
            line = b"data: " + mend_json(body) + line[len(line.rstrip(b"\r\n")) :]
        mended.append(line)
    return b"".join(mended)


class _MendedStream(httpx2.AsyncByteStream):
    """A response body passed on with lone surrogates mended: a JSON body whole, an event
    stream line by line (each line as soon as it ends, as the SDK's event reader needs it)."""

    def __init__(self, stream: httpx2.AsyncByteStream, events: bool) -> None:
        self.stream = stream
        self.events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = bytearray()
        async for chunk in self.stream:
            pending += chunk
            if self.events and b"\n" in chunk:
                ended = pending.rfind(b"\n") + 1
                yield _mend_events(bytes(pending[:ended]))
                del pending[:ended]
        if pending:
            yield _mend_events(bytes(pending)) if self.events else mend_json(bytes(pending))

    async def aclose(self) -> None:
        await self.stream.aclose()


class MendingTransport(httpx2.AsyncHTTPTransport):
    """An HTTP transport whose JSON and event-stream bodies come with lone surrogates mended."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Return the response, its body to be mended as it is read."""
        response = await super().handle_async_request(request)
        kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind in ("application/json", "text/event-stream"):
            response.stream = _MendedStream(response.stream, kind == "text/event-stream")
        return response


def make_http_client(
    headers: dict[str, str], backend: GuardedBackend, read_seconds: float
) -> httpx2.AsyncClient:
    """Return an HTTP client for one MCP session whose connections go through ``backend``."""
    transport = MendingTransport(trust_env=False)
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
