"""The model call's HTTP, as a model server or a proxy on the way sees it: the client's cookies
go back, its redirects are followed with the body and key, and the proxy from the environment
carries the call."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from tests.workers.test_provider_body import RawServer
from workers.providers import OpenAICompatibleProvider, TextDelta

ANSWER = (
    b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


class Seen:
    """One request as the server read it: its request line, its headers in order, its body."""

    def __init__(self, line: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.line = line
        self.headers = headers
        self.body = body

    def header(self, name: bytes) -> bytes | None:
        """The value of header ``name`` (any case), or None."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


Answer = Callable[[Seen], bytes]


def streamed(extra: bytes = b"") -> bytes:
    """A whole chunked event-stream answer saying "Hi", with ``extra`` header lines."""
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(ANSWER), ANSWER)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    return head + extra + b"Transfer-Encoding: chunked\r\n\r\n" + body


class WireServer(RawServer):
    """A loopback HTTP/1.1 server that keeps every request it reads, bytes as sent, and
    answers each with ``answer(seen)``; connections are kept open between requests."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.seen: list[Seen] = []
        super().__init__(b"", [])

    def _answer(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            while line := reader.readline():
                headers = []
                while header := reader.readline().rstrip(b"\r\n"):
                    name, value = header.split(b": ", 1)
                    headers.append((name, value))
                seen = Seen(line.rstrip(b"\r\n"), headers, b"")
                seen.body = reader.read(int(seen.header(b"Content-Length") or 0))
                self.seen.append(seen)
                conn.sendall(self.answer(seen))


@pytest.fixture
def serve():
    servers: list[WireServer] = []

    def start(answer: Answer) -> WireServer:
        servers.append(WireServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def said(provider: OpenAICompatibleProvider) -> str:
    """The text of one model call."""
    messages = [{"role": "user", "content": "hello"}]
    return "".join(e.text for e in provider.stream("m", messages) if isinstance(e, TextDelta))


def test_a_cookie_the_server_set_is_sent_on_the_next_call(serve):
    """A balancer's sticky cookie goes back as it did through the client's send."""
    server = serve(lambda seen: streamed(b"Set-Cookie: node=b7; Path=/\r\n"))
    base_url = f"http://127.0.0.1:{server.port}/v1"
    with OpenAICompatibleProvider("Sticky", base_url, "k") as provider:
        assert said(provider) == "Hi"
        assert said(provider) == "Hi"
    first, second = server.seen
    assert first.header(b"Cookie") is None
    assert second.header(b"Cookie") == b"node=b7"


def test_a_redirect_is_followed_with_the_body_and_key(serve):
    """A 307 (a server moved under a balancer) is followed as the client followed it: the same
    POST, its body and its key, at the new address."""

    def answer(seen: Seen) -> bytes:
        if seen.line.startswith(b"POST /v1/"):
            return (
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /v2/chat/completions\r\n"
                b"Content-Length: 0\r\n\r\n"
            )
        return streamed()

    server = serve(answer)
    with OpenAICompatibleProvider("Moved", f"http://127.0.0.1:{server.port}/v1", "k") as provider:
        assert said(provider) == "Hi"
    moved, there = server.seen
    assert there.line == b"POST /v2/chat/completions HTTP/1.1"
    assert there.body == moved.body and there.header(b"Authorization") == b"Bearer k"


def test_the_proxy_from_the_environment_carries_the_call(serve, monkeypatch):
    """HTTP_PROXY is read by the client as before: the call goes to the proxy, which is asked
    for the model's whole URL."""
    proxy = serve(lambda seen: streamed())
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with OpenAICompatibleProvider("Proxied", "http://model.invalid/v1", "k") as provider:
        assert said(provider) == "Hi"
    (seen,) = proxy.seen
    assert seen.line == b"POST http://model.invalid/v1/chat/completions HTTP/1.1"
    assert seen.header(b"Host") == b"model.invalid"
