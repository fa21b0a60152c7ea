"""The INFO log holds Lookout's lines, not a line per HTTP request its libraries make.

Regression: httpx (the openai SDK's client) logs "HTTP Request: POST …" at INFO for every model
call, so a worker at the default LOG_LEVEL wrote a line a model step, and an MCP server's calls
one each, burying the lines an operator reads.
"""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest

from core import config


class Ok(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802  (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def test_a_model_call_writes_no_info_line_but_a_warning_still_shows(server):
    root = logging.getLogger()
    level = root.level
    config.configure_logging("INFO")
    root.setLevel(logging.INFO)  # as in a worker (under pytest basicConfig leaves it alone)
    lines = Lines()
    root.addHandler(lines)
    try:
        with httpx2.Client() as client:
            assert client.post(f"{server}/v1/chat/completions", json={}).status_code == 200
        logging.getLogger("httpx2").warning("a library's warning")
    finally:
        root.removeHandler(lines)
        root.setLevel(level)
    assert [(r.name, r.getMessage()) for r in lines.records if r.name.startswith("httpx")] == [
        ("httpx2", "a library's warning")
    ]
