"""The network guard for MCP servers over HTTP: each connection goes where the policy allows.

The SDK talks HTTP with ``httpx2``; its connection pool opens sockets through a network backend,
so the guard is a backend that resolves the host itself, asks the address policy about every
address, and connects to an allowed one by its number (TLS still checks the host's name). A
refusal is kept on the backend, so the caller can say why the server could not be reached.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

import anyio
import httpcore2
import httpx2
from httpcore2._backends.anyio import AnyIOBackend
from httpcore2._backends.base import AsyncNetworkStream

from tools.addresses import AddressPolicy

# The SDK's own defaults: a server may hold a response stream open for long.
CONNECT_SECONDS = 10.0


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


def make_http_client(
    headers: dict[str, str], backend: GuardedBackend, read_seconds: float
) -> httpx2.AsyncClient:
    """Return an HTTP client for one MCP session whose connections go through ``backend``."""
    transport = httpx2.AsyncHTTPTransport(trust_env=False)
    # httpx2 takes no network backend of its own: its pool is rebuilt around the guard.
    transport._pool = httpcore2.AsyncConnectionPool(  # noqa: SLF001
        ssl_context=transport._pool._ssl_context,  # noqa: SLF001
        network_backend=backend,
    )
    timeout = httpx2.Timeout(read_seconds, connect=CONNECT_SECONDS)
    return httpx2.AsyncClient(
        transport=transport, headers=headers, timeout=timeout, trust_env=False
    )
