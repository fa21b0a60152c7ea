"""Fixtures for the web_search tests: recorded engine replies, a started tool, and a search."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import responses

from tools.api import Citation, Tool
from tools.testing import start_plugin, tool_context_for_test
from tools.web_search import plugin

RECORDINGS = Path(__file__).parent / "recordings"
API_KEY = "sk-live-7f3a9c2e5b1d4e6f8a0b"


@pytest.fixture
def api_key() -> str:
    """A key that must never show up in a message or a log line."""
    return API_KEY


@pytest.fixture
def recording() -> Callable[[str], str]:
    """Return ``load(name)``: the text of a recorded engine reply."""

    def load(name: str) -> str:
        return (RECORDINGS / name).read_text(encoding="utf-8")

    return load


@pytest.fixture
def angle_brackets() -> list[tuple[str, str]]:
    """The titles and snippets every ``<engine>_angle_brackets`` recording must come out as."""
    return [
        (
            "std::vector<T,Allocator> - cppreference.com",
            "template< class T, class Allocator = std::allocator<T> > class vector; std::vector "
            "is a sequence container that encapsulates dynamic size arrays.",
        ),
        (
            "How do I write a literal <b> tag in Markdown? - Stack Overflow",
            "Escape it: write &lt;b&gt; and the reader sees <b>. AT&T's docs do the same for "
            "template <typename T>.",
        ),
    ]


@pytest.fixture
def angle_brackets_as_text() -> list[tuple[str, str]]:
    """What the ``<engine>_angle_brackets`` recordings of engines that send text (Tavily,
    SearXNG) come out as under the one rule every engine's text follows: a ``<`` that opens no
    HTML element stays, ``<b>`` is a tag and goes, ``&lt;`` is decoded once."""
    return [
        (
            "std::vector<T,Allocator> - cppreference.com",
            "template< class T, class Allocator = std::allocator<T> > class vector; std::vector "
            "is a sequence container that encapsulates dynamic size arrays.",
        ),
        (
            "How do I write a literal tag in Markdown? - Stack Overflow",
            "Escape it: write <b> and the reader sees . AT&T's docs do the same for template "
            "<typename T>.",
        ),
    ]


MARKUP = {
    "title": "<b>Requests</b>: HTTP for Humans&trade;",
    "url": "https://requests.readthedocs.io/",
    "content": "<p>Requests is an <em>elegant</em> &amp; simple HTTP&nbsp;library.</p>",
}
# What every engine's MARKUP result comes out as.
MARKUP_AS_TEXT = ("Requests: HTTP for Humans™", "Requests is an elegant & simple HTTP library.")


@pytest.fixture
def engine_replies() -> Iterator[responses.RequestsMock]:
    """Recorded engine replies; a test fails when one it registered was never asked for."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


@pytest.fixture
def web_search() -> Callable[..., Tool]:
    """Return ``start(**options)``: the web_search tool of the default plugin."""

    def start(**options: Any) -> Tool:
        return start_plugin(plugin, options)["web_search"]

    return start


@pytest.fixture
def search() -> Callable[..., tuple[dict[str, Any], list[Citation]]]:
    """Return ``run(tool, query, **context)``: the tool's output and the citations it made.

    The caller is an administrator unless ``roles`` says otherwise, so that a failure reads in
    the engine's own words; what other users read instead is tested in test_plugin.py.
    """

    def run(tool: Tool, query: str = "python requests", **context: Any) -> tuple[dict, list]:
        context.setdefault("roles", ["user", "admin"])
        ctx, citations = tool_context_for_test(**context)
        return tool.execute(tool.validate_input({"query": query}), ctx), citations

    return run


class _Handler(BaseHTTPRequestHandler):
    """Answers every request with the server's ``reply(handler)``; records the requests."""

    def do_GET(self) -> None:
        self.server.seen.append((self.command, self.path, dict(self.headers)))  # type: ignore[attr-defined]
        self.server.reply(self)  # type: ignore[attr-defined]

    do_POST = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[Callable[..., Any]]:
    """Return ``serve(reply, host="127.0.0.1")``: a real HTTP server; ``.url`` and ``.seen``."""
    servers: list[ThreadingHTTPServer] = []

    def serve(reply: Callable[[BaseHTTPRequestHandler], None], host: str = "127.0.0.1") -> Any:
        server = ThreadingHTTPServer((host, 0), _Handler)
        server.daemon_threads = True
        server.reply = reply  # type: ignore[attr-defined]
        server.seen = []  # type: ignore[attr-defined]
        server.url = f"http://{host}:{server.server_address[1]}"  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def reply_with(body: str, status: int = 200, content_type: str = "application/json") -> Any:
    """Return a loopback reply sending ``body`` with ``status``."""

    def reply(handler: BaseHTTPRequestHandler) -> None:
        data = body.encode("utf-8")
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return reply


@pytest.fixture
def replying() -> Callable[..., Any]:
    """Return ``reply_with(body, status=200, content_type=...)`` for ``loopback``."""
    return reply_with


def kept_of_odd_entries(last_snippet: str = "") -> list[dict[str, str]]:
    """The results every engine's ``*_odd_entries`` recording keeps: its readable entries, a
    null title or snippet read as empty text (Tavily's last entry has a snippet)."""
    return [
        {
            "title": "Requests: HTTP for Humans",
            "url": "https://requests.readthedocs.io/en/latest/",
            "snippet": "Requests is an elegant and simple HTTP library.",
        },
        {"title": "", "url": "https://pypi.org/project/requests/", "snippet": ""},
        {
            "title": "Python's Requests Library",
            "url": "https://realpython.com/python-requests/",
            "snippet": last_snippet,
        },
    ]
