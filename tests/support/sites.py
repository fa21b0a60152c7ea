"""Small loopback web sites for tests: the paths a test serves, and a record of every request.

    with Site("127.0.0.2") as site:          # 127.0.0.2: a host tests may treat as public
        site.serve("/page", "text/plain", b"hello")
        site.route("/slow", lambda request: request.stream("text/plain", b"x", None, 0.05))
        fetch(site.url("/page"))
        assert site.paths() == ["/page"]

Unknown paths answer 404 unless ``site.fallback`` serves them. ``Site(host, port, tls,
protocol)`` binds a given port, serves HTTPS with an ``ssl.SSLContext``, or speaks HTTP/1.0.
``SiteHandler.reply``, ``redirect`` and ``stream`` build responses.
"""

from __future__ import annotations

import http.server
import ssl
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

Handler = Callable[["SiteHandler"], None]


class Site(http.server.ThreadingHTTPServer):
    """A loopback HTTP server whose paths the test defines, recording what it received."""

    daemon_threads = True

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
        protocol: str = "HTTP/1.1",
    ) -> None:
        super().__init__((host, port), SiteHandler)
        self.host = host
        self.scheme = "http"
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"
        self.protocol = protocol
        self.routes: dict[str, Handler] = {}
        self.fallback: Handler | None = None  # serves paths without a route; else 404
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.client_gone = threading.Event()
        self.bytes_sent = 0
        self.thread = threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def url(self, path: str = "/", host: str | None = None) -> str:
        """The address of ``path``, on this server's host or another name for it."""
        return f"{self.scheme}://{host or self.host}:{self.port}{path}"

    def route(self, path: str, handler: Handler) -> None:
        """Serve ``path`` (without its query) with ``handler(request_handler)``."""
        self.routes[path] = handler

    def serve(self, path: str, content_type: str, body: bytes) -> None:
        """Serve ``path`` with a fixed 200 response."""
        self.route(path, lambda request: request.reply(200, content_type, body))

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that stops reading resets the connection: expected here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def __enter__(self) -> Site:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join()


class SiteHandler(http.server.BaseHTTPRequestHandler):
    server: Site

    def setup(self) -> None:
        super().setup()
        self.protocol_version = self.server.protocol

    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        self.server.requests.append((self.path, dict(self.headers.items())))
        handler = self.server.routes.get(self.path.split("?", 1)[0], self.server.fallback)
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
