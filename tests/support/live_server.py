"""The app served over real HTTP by werkzeug in a thread, on 127.0.0.1 and a free port."""

from __future__ import annotations

import threading

from flask import Flask
from werkzeug.serving import make_server

from tests.support.processes import free_port


class LiveServer:
    """A threaded werkzeug server for app; `url` is its base address, without a trailing slash."""

    def __init__(self, app: Flask) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = make_server("127.0.0.1", self.port, app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> LiveServer:
        """Start serving and return self."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
