"""The model's streamed body read below httpx (workers/providers/body.py): the same bytes and
errors as httpx gave, and the connection's state kept for httpx's pool."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx2
import pytest

from tests.support.fake_model import FakeModel, Reply
from tools.api import Signal
from workers.providers import (
    Finished,
    OpenAICompatibleProvider,
    ProviderCancelled,
    TextDelta,
    ToolCallRequest,
)
from workers.providers.body import KEPT_BYTES, ChunkedBody, body_chunks


class RawServer:
    """A loopback HTTP/1.1 server that answers every GET with the scripted pieces of bytes,
    written one at a time with a pause between (each its own read), and counts connections."""

    def __init__(self, head: bytes, pieces: list[bytes], keep_open: bool = True) -> None:
        self.head = head
        self.pieces = pieces
        self.keep_open = keep_open
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            received = b""
            while True:
                while b"\r\n\r\n" not in received:
                    data = conn.recv(65536)
                    if not data:
                        return
                    received += data
                received = received.split(b"\r\n\r\n", 1)[1]
                try:
                    conn.sendall(self.head)
                    for piece in self.pieces:
                        time.sleep(0.01)
                        conn.sendall(piece)
                except OSError:
                    return
                if not self.keep_open:
                    return

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def close(self) -> None:
        self.listener.close()


CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def read(url: str, client: httpx2.Client) -> Iterator[bytes]:
    with client.stream("GET", url) as response:
        yield from body_chunks(response)


@pytest.fixture
def serve():
    """Start RawServers for the test, closed after it."""
    servers: list[RawServer] = []

    def start(head: bytes, pieces: list[bytes], keep_open: bool = True) -> RawServer:
        servers.append(RawServer(head, pieces, keep_open))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def client():
    with httpx2.Client(timeout=5) as client:
        yield client


def test_chunks_split_across_reads_or_sharing_one_read_give_the_bodys_bytes(serve, client):
    pieces = [b"5\r\nhel", b"lo\r\n", b"1;name=value\r\n ", b"\r\n3\r\nab", b"c\r\n4\r\nwxyz\r\n"]
    pieces.append(b"0\r\n\r\n")
    server = serve(CHUNKED, pieces)
    assert b"".join(read(server.url, client)) == b"hello abcwxyz"


def test_a_body_read_with_no_read_timeout_waits_for_its_pieces_below_httpx(serve):
    """Without a timeout the socket blocks: it is read by ``recv``, which waits for each
    piece, not by the ``os.read`` a timeout's non-blocking socket is read by first."""
    pieces = [b"5\r\nhel", b"lo\r\n", b"3\r\nabc\r\n", b"0\r\n\r\n"]
    server = serve(CHUNKED, pieces)
    with httpx2.Client(timeout=None) as client, client.stream("GET", server.url) as response:
        body = body_chunks(response)
        assert isinstance(body, ChunkedBody)
        assert b"".join(body) == b"helloabc"
        assert not body.direct


def test_a_body_read_to_its_end_leaves_its_connection_to_the_pool(serve, client):
    server = serve(CHUNKED, [b"5\r\nhello\r\n", b"0\r\nX-Trailer: 1\r\n\r\n"])
    for _ in range(3):
        assert b"".join(read(server.url, client)) == b"hello"
    assert server.connections == 1


def test_a_body_that_came_whole_with_its_headers_leaves_the_connection_usable(serve, client):
    """h11 was handed an empty read when nothing had come after the headers, which told it the
    server had closed the connection: the next request on it failed and was retried."""
    server = serve(CHUNKED + b"5\r\nhello\r\n0\r\n\r\n", [])
    for _ in range(3):
        assert b"".join(read(server.url, client)) == b"hello"
    assert server.connections == 1


def test_a_long_body_read_to_its_end_leaves_its_connection_to_the_pool(serve, client):
    """h11 was handed the whole body to parse at its end, so a body longer than what was kept
    for it (an answer of a few hundred tokens) closed its connection."""
    piece = b"x" * 4096
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    count = KEPT_BYTES // len(piece) + 2
    server = serve(CHUNKED, [chunk] * count + [b"0\r\n\r\n"])
    for _ in range(2):
        assert b"".join(read(server.url, client)) == piece * count
    assert server.connections == 1


def test_a_first_chunk_longer_than_what_is_kept_for_h11_closes_its_connection(serve, client):
    size = KEPT_BYTES + 8192  # its start comes with the headers, so h11 holds it
    pieces = [b"x" * 4096] * (size // 4096) + [b"\r\n0\r\n\r\n"]
    server = serve(CHUNKED + f"{size:x}\r\n".encode(), pieces)
    for _ in range(2):
        assert b"".join(read(server.url, client)) == b"x" * size
    assert server.connections == 2


def test_a_body_cut_short_is_a_protocol_error_as_httpx_raised_it(serve, client):
    server = serve(CHUNKED, [b"5\r\nhello\r\n", b"9\r\nabc"], keep_open=False)
    with pytest.raises(httpx2.RemoteProtocolError):
        list(read(server.url, client))


def test_a_malformed_chunk_size_is_a_protocol_error(serve, client):
    server = serve(CHUNKED, [b"5\r\nhello\r\n", b"zz\r\nabc\r\n"], keep_open=False)
    with pytest.raises(httpx2.RemoteProtocolError):
        list(read(server.url, client))


def test_trailers_that_never_end_are_a_protocol_error_not_a_read_for_ever(serve, client):
    """A server could send trailer lines after the last chunk for ever, each in time: the
    reader gave the caller nothing to check its deadline on."""
    endless = [b"X-More: " + b"y" * 1000 + b"\r\n"] * 40  # 40 KB of trailers, never an end
    server = serve(CHUNKED, [b"5\r\nhello\r\n0\r\n", *endless], keep_open=False)
    with pytest.raises(httpx2.RemoteProtocolError, match="trailers"):
        list(read(server.url, client))


def test_thousands_of_small_chunks_in_one_read_give_the_bodys_bytes(serve, client):
    words = [f"w{i} ".encode() for i in range(5000)]
    body = b"".join(f"{len(w):x}\r\n".encode() + w + b"\r\n" for w in words)
    server = serve(CHUNKED, [body + b"0\r\n\r\n"])
    assert b"".join(read(server.url, client)) == b"".join(words)


def test_a_silent_server_times_out_as_httpx_timed_out(serve):
    server = serve(CHUNKED, [b"5\r\nhello\r\n"])
    with httpx2.Client(timeout=0.3) as client, pytest.raises(httpx2.ReadTimeout):
        list(read(server.url, client))


def test_a_compressed_body_is_read_and_decoded_through_httpx(serve, client):
    packed = gzip.compress(b"data: hi\n\n")
    head = CHUNKED.replace(b"\r\n\r\n", b"\r\nContent-Encoding: gzip\r\n\r\n")
    body = f"{len(packed):x}\r\n".encode() + packed + b"\r\n0\r\n\r\n"
    server = serve(head, [body])
    assert b"".join(read(server.url, client)) == b"data: hi\n\n"


def test_a_body_with_a_length_is_read_through_httpx(serve, client):
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
    server = serve(head, [b"hel", b"lo"])
    with client.stream("GET", server.url) as response:
        assert ChunkedBody.of(response) is None
        assert b"".join(body_chunks(response)) == b"hello"


def test_the_model_servers_stream_is_read_below_httpx():
    """Pins httpx's and httpcore's private path to the connection's h11 state: an upgrade that
    moves it would put every streamed token back through httpx's layers unnoticed."""
    with FakeModel() as fake, httpx2.Client(timeout=5) as client:
        fake.script(Reply.text("one two three", chunks=3))
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        url = f"{fake.base_url}/chat/completions"
        with client.stream("POST", url, json=body) as response:
            assert ChunkedBody.of(response) is not None
            assert b"one " in b"".join(body_chunks(response))


# The answer's end: [DONE] comes a chunk before the body's last --------------------------------

HELLO = [{"role": "user", "content": "Hello"}]
ANSWER = [
    '{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": null}]}',
    '{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}',
    "[DONE]",
]


def event_chunk(data: str) -> bytes:
    """One server-sent event as one HTTP chunk, as servers send a token."""
    payload = f"data: {data}\n\n".encode()
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def answer_text(provider: OpenAICompatibleProvider, signal: Signal | None = None) -> str:
    events = provider.stream("m", HELLO, signal=signal)
    return "".join(event.text for event in events if isinstance(event, TextDelta))


@pytest.fixture
def fake():
    with FakeModel() as server:
        yield server


def test_model_calls_on_one_client_reuse_one_connection(fake):
    """A stream that ended with [DONE] never gave its connection back to the pool: the reader
    stopped before the body's last chunk, and each model call opened a new connection (for a
    TLS provider, a handshake on every model step)."""
    with OpenAICompatibleProvider("Fakery", fake.base_url, None) as provider:
        fake.script(Reply.text("one two three", chunks=3), Reply.text("four five", chunks=2))
        assert answer_text(provider) == "one two three"
        first = set(fake.connections)
        assert answer_text(provider) == "four five"
        assert len(first) == 1 and fake.connections == first


def test_a_last_chunk_that_comes_a_moment_after_done_keeps_the_connection(serve):
    pieces = [event_chunk(data) for data in ANSWER] + [b"0\r\n\r\n"]  # each 10 ms apart
    server = serve(CHUNKED, pieces)
    with OpenAICompatibleProvider("Raw", server.url, None) as provider:
        for _ in range(3):
            assert answer_text(provider) == "hi"
    assert server.connections == 1


def test_a_tool_calls_arguments_read_between_paced_waits_come_whole(serve):
    arguments = '{"query": "the tides of the North Sea in winter"}'
    start = {"index": 0, "id": "call_1", "function": {"name": "web_search", "arguments": ""}}
    fragments = [arguments[at : at + 4] for at in range(0, len(arguments), 4)]
    chunks = [{"tool_calls": [start]}] + [
        {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} for piece in fragments
    ]
    data = [json.dumps({"choices": [{"index": 0, "delta": delta}]}) for delta in chunks]
    data += ['{"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}', "[DONE]"]
    # Each 10 ms apart; the reads after the first fragment's wait 0.3 s between them.
    server = serve(CHUNKED, [event_chunk(item) for item in data] + [b"0\r\n\r\n"])
    with OpenAICompatibleProvider("Raw", server.url, None, read_interval=0.3) as provider:
        events = list(provider.stream("m", HELLO))
    calls = [event for event in events if isinstance(event, ToolCallRequest)]
    assert [(call.id, call.name, call.raw_arguments) for call in calls] == [
        ("call_1", "web_search", arguments)
    ]
    assert calls[0].arguments == {"query": "the tides of the North Sea in winter"}
    assert events[-1] == Finished("tool_calls")


MEGABYTE_CHUNK = b"100000\r\n" + b"x" * (1024 * 1024) + b"\r\n"


@pytest.mark.parametrize(
    "after_done",
    [pytest.param([], id="kept-open"), pytest.param([MEGABYTE_CHUNK] * 4, id="megabytes")],
)
def test_a_body_that_goes_on_after_done_costs_at_most_its_bound_and_its_connection(
    serve, after_done
):
    """What follows [DONE] without the body's end (nothing while the server holds it open, or
    megabytes) is not read to the read timeout (60 s) nor to its end: the connection closes."""
    server = serve(CHUNKED, [event_chunk(data) for data in ANSWER] + after_done)
    with OpenAICompatibleProvider("Raw", server.url, None) as provider:
        for _ in range(2):
            started = time.monotonic()
            assert answer_text(provider) == "hi"
            # A busy machine may take seconds, not the read timeout.
            assert time.monotonic() - started < 20
    assert server.connections == 2


def test_cancelling_mid_stream_still_closes_the_connection(fake):
    with OpenAICompatibleProvider("Fakery", fake.base_url, None) as provider:
        fake.script(Reply.forever(delay=0.02), Reply.text("after", chunks=1))
        signal = Signal()
        received = 0
        with pytest.raises(ProviderCancelled):
            for _ in provider.stream("m", HELLO, signal=signal):
                received += 1
                if received == 3:
                    signal.cancel()
        cancelled = set(fake.connections)
        fake.wait_for_disconnects(1, timeout=2)
        assert answer_text(provider) == "after"
        assert fake.connections - cancelled  # a new connection: the cancelled one was closed
