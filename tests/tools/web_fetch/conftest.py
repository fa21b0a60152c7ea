"""Fixtures for web_fetch: a loopback site on 127.0.0.2 treated as public, simulated DNS, calls.

Fixtures:
    site        a ThreadingHTTPServer on 127.0.0.2; ``site.route(path, handler)`` serves a path,
                ``site.requests`` records (path, headers) of every request received
    dns         a dict of host name -> IP that ``socket.getaddrinfo`` answers from (other names
                fail to resolve, so no test reaches real DNS)
    web_fetch   ``web_fetch(options=None, ingesters=())`` -> a Runner that calls the started tool
"""

from __future__ import annotations

import http.server
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tools.api import Citation, Ingester, Signal, Tool
from tools.net import GuardedSession
from tools.testing import start_plugin, tool_context_for_test
from tools.web_fetch import plugin

PUBLIC_IP = "127.0.0.2"
Handler = Callable[["SiteHandler"], None]


class Site(http.server.ThreadingHTTPServer):
    """A loopback HTTP server whose paths the test defines, recording what it received."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__((PUBLIC_IP, 0), SiteHandler)
        self.routes: dict[str, Handler] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.client_gone = threading.Event()
        self.bytes_sent = 0
        self.thread = threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def url(self, path: str = "/", host: str = PUBLIC_IP) -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that stops reading resets the connection: expected here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join()


class SiteHandler(http.server.BaseHTTPRequestHandler):
    server: Site
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        self.server.requests.append((self.path, dict(self.headers.items())))
        handler = self.server.routes.get(self.path.split("?", 1)[0])
        if handler is None:
            self.reply(404, "text/plain", b"not found")
        else:
            handler(self)

    def reply(self, status: int, content_type: str | None, body: bytes, **headers: str) -> None:
        """Send a whole response with a Content-Length."""
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, status: int, location: str) -> None:
        self.reply(status, "text/plain", b"", Location=location)

    def stream(self, content_type: str, chunk: bytes, length: int | None, pause: float = 0) -> None:
        """Send ``chunk`` again and again (up to ``length`` bytes, or forever) until the client
        goes away, then record that it did and how much was sent."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while length is None or self.server.bytes_sent < length:
                self.wfile.write(chunk)
                self.wfile.flush()
                self.server.bytes_sent += len(chunk)
                if pause:
                    time.sleep(pause)
        except OSError:
            self.server.client_gone.set()
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site()
    yield server
    server.stop()


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Answer getaddrinfo from a dict; IP literals pass through; other names do not resolve."""
    names: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[name], int(port)))]
        if name.replace(".", "").isdigit():
            return real(host, port, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


@dataclass
class Runner:
    """Calls one started web_fetch tool as a turn would, through a guarded session."""

    tool: Tool
    turn_cache: dict[str, Any] = field(default_factory=dict)
    citations: list[Citation] = field(default_factory=list)

    def __call__(self, url: str, offset: int | None = None, signal: Signal | None = None) -> Any:
        raw: dict[str, Any] = {"url": url}
        if offset is not None:
            raw["offset"] = offset
        session = GuardedSession(address_allowed=lambda ip: ip == PUBLIC_IP)
        ctx, citations = tool_context_for_test(
            fetch=session, signal=signal, turn_cache=self.turn_cache
        )
        try:
            return self.tool.execute(self.tool.validate_input(raw), ctx)
        finally:
            self.citations.extend(citations)
            session.close()


@pytest.fixture
def web_fetch() -> Callable[..., Runner]:
    def start(
        options: dict[str, Any] | None = None, ingesters: tuple[Ingester, ...] = ()
    ) -> Runner:
        tools = start_plugin(plugin, options or {}, ingesters=ingesters)
        return Runner(tools["web_fetch"])

    return start
