"""The HTTP side of the fake model: OpenAI's chat completions (streamed or not) and model list."""

from __future__ import annotations

import json
import select
import socket
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.fake_model import FakeModel, Reply

SILENT_LIMIT_SECONDS = 120.0


class ClientGone(Exception):
    """The client closed the connection in the middle of a stream."""


class HungUp(Exception):
    """The script made the server drop the connection in the middle of a stream."""


def split(text: str, pieces: int) -> list[str]:
    """Cut ``text`` into at most ``pieces`` parts of near-equal length (at least one part)."""
    pieces = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), pieces)
    parts, start = [], 0
    for index in range(pieces):
        end = start + size + (1 if index < extra else 0)
        parts.append(text[start:end])
        start = end
    return parts


class FakeModelHandler(BaseHTTPRequestHandler):
    """Answers one connection's requests from the owning FakeModel's script."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small SSE writes would otherwise wait ~40 ms for ACKs
    timeout = 30
    server_version = "FakeModel/1"

    @property
    def fake(self) -> FakeModel:
        return self.server.fake  # type: ignore[attr-defined]

    def setup(self) -> None:
        super().setup()
        with self.fake._changed:
            self.fake.connections.add(self.connection)

    def finish(self) -> None:
        with self.fake._changed:
            self.fake.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read the recorded requests instead."""

    @staticmethod
    def shut(connection: socket.socket) -> None:
        """Shut a connection down both ways, ignoring one already gone."""
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # Routing ----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        reply = self._record(None)
        if self._refused(reply):
            return
        if self.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                | ({"context_length": self.fake.contexts[m]} if m in self.fake.contexts else {})
                for m in self.fake.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"error": {"message": f"No route {self.path}."}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        reply = self._record(body)
        if self._refused(reply):
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"No route {self.path}."}})
            return
        request = body if isinstance(body, dict) else {}
        if request.get("stream"):
            self._stream(reply, request)
        else:
            self._send_json(200, completion(reply, request.get("model", "")))

    def _record(self, body: Any) -> Reply:
        from tests.support.fake_model import RecordedRequest

        headers = {name.lower(): value for name, value in self.headers.items()}
        return self.fake.record(RecordedRequest(self.command, self.path, headers, body))

    def _refused(self, reply: Reply) -> bool:
        """Send the scripted HTTP error, or a 401 for a wrong key; True when one was sent."""
        expected = self.fake.api_key
        if expected is not None and self.headers.get("Authorization") != f"Bearer {expected}":
            self._send_json(401, {"error": {"message": "Incorrect API key provided."}})
            return True
        if reply.status == 200:
            return False
        self._send_json(reply.status, reply.body, dict(reply.headers))
        return True

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    # Streaming --------------------------------------------------------------------------------

    def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.fake.stream_opened()
        gone = False
        try:
            if reply.raw_body:
                self._write(reply.raw_body)
            elif reply.raw_body is not None:
                pass  # an empty body: the chunked body ends at once
            else:
                self._events(reply, request)
            self._write_chunk(b"")
        except (ClientGone, BrokenPipeError, ConnectionResetError):
            gone = True
            self.close_connection = True
        except HungUp:
            self.close_connection = True
        finally:
            self.fake.stream_closed(gone)

    def _events(self, reply: Reply, request: dict[str, Any]) -> None:
        chunk = ChunkMaker(request.get("model", ""))
        self._send(chunk.delta({"role": "assistant", "content": ""}))
        if reply.silent:
            self._quiet(SILENT_LIMIT_SECONDS, reply.pings)
            return
        while reply.endless:
            self._pause(reply.delay)
            self._send(chunk.delta({"content": reply.content}))
        for piece in split(reply.reasoning, reply.chunks) if reply.reasoning else []:
            self._send(chunk.delta({reply.reasoning_field: piece}))
        # Chunks are due on a fixed schedule, so a loaded client does not slow the "model" down.
        start = time.monotonic()
        for index, piece in enumerate(split(reply.content, reply.chunks) if reply.content else []):
            if reply.pause_after and index == reply.pause_after[0]:
                start += reply.pause_after[1]
                if reply.release is not None:
                    held_until = start + index * reply.delay
                    while not reply.release.is_set() and time.monotonic() < held_until:
                        self._pause(0.05)
                    start = time.monotonic() - index * reply.delay
            self._pause_until(start + (index + 1) * reply.delay)
            self._send(chunk.delta({"content": piece}))
        if reply.sources:
            notes = [
                {"type": "url_citation", "url_citation": {"url": url, "title": title}}
                for url, title in reply.sources
            ]
            self._send(chunk.delta({"annotations": notes}))
        if reply.silence:
            self._quiet(reply.silence, reply.pings)
        if reply.then == "close":
            return  # the caller ends the chunked body cleanly: no finish_reason, no [DONE]
        if reply.then == "done":
            self._write("data: [DONE]\n\n")  # interrupted: no finish_reason
            return
        if reply.then == "error":
            error = {
                "message": "The server had an error processing your request.",
                "type": "server_error",
                "code": 500,
            }
            self._send({"error": error})
            return
        if reply.then == "disconnect":
            self.close_connection = True
            self.shut(self.connection)
            raise HungUp
        for index, (name, arguments) in enumerate(reply.calls):
            call = {
                "index": index,
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            self._send(chunk.delta({"tool_calls": [call]}))
            for piece in split(arguments, reply.argument_chunks) if arguments else []:
                fragment = {"index": index, "function": {"arguments": piece}}
                self._send(chunk.delta({"tool_calls": [fragment]}))
        finish = "length" if reply.then == "length" else "tool_calls" if reply.calls else "stop"
        self._send(chunk.delta({}, finish))
        include_usage = (request.get("stream_options") or {}).get("include_usage")
        if include_usage and reply.usage is not None:
            self._send(chunk.usage(*reply.usage, reasoning_tokens=reply.reasoning_tokens))
        self._write("data: [DONE]\n\n")

    def _quiet(self, seconds: float, pings: float) -> None:
        """Say nothing for ``seconds``, but a ``: ping`` comment every ``pings`` seconds."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if pings:
                self._pause(min(pings, max(0.0, deadline - time.monotonic())))
                if time.monotonic() < deadline:
                    self._write(": ping\n\n")
            else:
                self._pause(min(0.05, max(0.0, deadline - time.monotonic())))

    def _send(self, event: dict[str, Any]) -> None:
        self._write(f"data: {json.dumps(event)}\n\n")

    def _write(self, text: str) -> None:
        self._write_chunk(text.encode())

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _pause(self, seconds: float) -> None:
        """Sleep ``seconds``; raise ClientGone as soon as the client closes the connection."""
        self._pause_until(time.monotonic() + seconds)

    def _pause_until(self, deadline: float) -> None:
        """Sleep until ``deadline`` (monotonic); raise ClientGone if the client goes away."""
        while True:
            if self.fake.stopping.is_set():
                raise ClientGone
            left = deadline - time.monotonic()
            readable, _, _ = select.select([self.connection], [], [], max(0.0, min(left, 0.05)))
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        raise ClientGone
                except (ConnectionResetError, BrokenPipeError) as exc:
                    raise ClientGone from exc
                time.sleep(max(0.0, min(left, 0.05)))  # unexpected bytes: not a disconnect
            if left <= 0:
                return


class ChunkMaker:
    """Builds the chat.completion.chunk objects of one stream."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self.model = model
        self.created = int(time.time())

    def _base(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        """A chunk carrying one delta."""
        return self._base([{"index": 0, "delta": delta, "finish_reason": finish_reason}])

    def usage(
        self, prompt_tokens: int, completion_tokens: int, reasoning_tokens: int | None = None
    ) -> dict[str, Any]:
        """The final usage chunk, with no choices, as OpenAI sends it (with the reasoning
        tokens in ``completion_tokens_details`` when given)."""
        chunk = self._base([])
        chunk["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if reasoning_tokens is not None:
            chunk["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        return chunk


def completion(reply: Reply, model: str) -> dict[str, Any]:
    """The non-streaming chat.completion answer for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for name, arguments in reply.calls
        ]
    prompt_tokens, completion_tokens = reply.usage or (0, 0)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
