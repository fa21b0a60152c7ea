"""A scripted OpenAI-compatible model server on loopback that records every request it gets.

    with FakeModel() as fake:
        fake.script(Reply.tool_calls([("web_search", {"query": "x"})]), Reply.text("Done."))
        provider = OpenAICompatibleProvider("fake", fake.base_url, "sk-test")
        ...
        assert fake.last_request().json["tools"][0]["function"]["name"] == "web_search"

Scripted replies are served first in, first out; with the queue empty the server answers with
``responder(request_json)`` when one is set, else with ``default`` (a short text).

Scripted breaks, for the ways a model's stream really fails (``Reply.text(..., then=...)``,
after the text and its sources, and after ``silence`` seconds of saying nothing if given):

    then="error"        an in-stream error event (HTTP 500 in its body), then a clean end
    then="disconnect"   the connection dropped mid-body: the chunked body never ends
    then="close"        a clean end of the body with neither a finish_reason nor ``[DONE]``,
                        as a proxy sends when its upstream dies
    then="done"         a bare ``data: [DONE]`` with no finish_reason, as llama.cpp's server
                        ends a stream it interrupted for a newer request
    then="length"       ``finish_reason: "length"``: the model reached its max_tokens
    silence=N           nothing sent for N seconds (the connection stays open), then ``then``
                        or the normal end
    pings=N             a keep-alive comment (``: ping``) every N seconds while silent
    Reply.hang()        nothing after the first chunk until the client goes away
    Reply.empty()       an HTTP 200 event stream with nothing in it
    FakeModel.stop()    the server killed mid-answer: every open stream is cut at once

Server behaviours of real servers, off by default (``FakeModel(...)`` arguments):

    context_chars=N         a prompt of more than N characters gets an empty 200 stream, as
                            llama.cpp answers a prompt longer than its context
    rejects_null_content    an assistant message with ``"content": null`` gets an HTTP 500
                            ("Input should be a valid string"), as llama-cpp-python's server
    refuses_tools={names}   a request offering tools to these models gets an HTTP 400 (Ollama)
    contexts={name: n}      ``GET /models`` reports ``context_length`` n for these models
    Reply.usage=None        no usage chunk, as a server ignoring ``include_usage`` sends

Reasoning models: ``Reply.text(..., reasoning="...")`` streams the reasoning first, in
``chunks`` pieces of ``reasoning_field`` deltas ("reasoning_content" as DeepSeek, vLLM and
llama.cpp send it, or "reasoning" as OpenRouter and Ollama), and reports ``reasoning_tokens``
in the usage's ``completion_tokens_details`` when given; ``<think>…</think>`` in ``text`` is
sent as text, as servers without a reasoning parser send it.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.fake_model_http import FakeModelHandler


@dataclass(frozen=True)
class Reply:
    """One scripted answer: text, tool calls, an HTTP error, or a stream that never ends."""

    content: str = ""
    chunks: int = 1
    delay: float = 0.0
    calls: tuple[tuple[str, str], ...] = ()
    argument_chunks: int = 1
    sources: tuple[tuple[str, str], ...] = ()
    usage: tuple[int, int] | None = (10, 5)
    status: int = 200
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    endless: bool = False
    silent: bool = False
    then: str | None = None
    raw_body: str | None = None
    pause_after: tuple[int, float] | None = None
    silence: float = 0.0
    release: threading.Event | None = None
    pings: float = 0.0
    reasoning: str = ""
    reasoning_field: str = "reasoning_content"
    reasoning_tokens: int | None = None

    @classmethod
    def text(
        cls,
        text: str,
        chunks: int = 1,
        delay: float = 0.0,
        usage: tuple[int, int] | None = (10, 5),
        sources: list[tuple[str, str]] | None = None,
        then: str | None = None,
        pause_after: tuple[int, float] | None = None,
        silence: float = 0.0,
        release: threading.Event | None = None,
        pings: float = 0.0,
        reasoning: str = "",
        reasoning_field: str = "reasoning_content",
        reasoning_tokens: int | None = None,
    ) -> Reply:
        """Text streamed in ``chunks`` pieces ``delay`` seconds apart, then ``usage`` (in, out);
        ``reasoning`` streamed before it (see the module's docstring).

        ``then`` breaks the stream after the text: "error", "disconnect", "close", "done" or
        "length" (see the module's docstring); ``silence`` sends nothing for that many seconds
        first (but a ``: ping`` comment every ``pings`` seconds when given).
        ``pause_after=(n, seconds)`` holds the pieces after the n-th (from 1) back ``seconds``
        longer, or until ``release`` is set when one is given.
        """
        assert then in (None, "error", "disconnect", "close", "done", "length"), (
            f"no break named {then!r}"
        )
        return cls(
            content=text,
            chunks=chunks,
            delay=delay,
            usage=usage,
            sources=tuple(sources or ()),
            then=then,
            pause_after=pause_after,
            silence=silence,
            release=release,
            pings=pings,
            reasoning=reasoning,
            reasoning_field=reasoning_field,
            reasoning_tokens=reasoning_tokens,
        )

    @classmethod
    def tool_calls(
        cls,
        calls: list[tuple[str, Any]],
        text: str = "",
        argument_chunks: int = 1,
        usage: tuple[int, int] | None = (10, 5),
        silence: float = 0.0,
        reasoning: str = "",
    ) -> Reply:
        """Tool calls as (name, arguments), arguments a dict or a raw string sent verbatim.

        Each call's arguments are split over ``argument_chunks`` stream chunks; ``text``, if
        given, is streamed before the calls, and ``silence`` seconds pass between the two;
        ``reasoning`` is streamed first of all.
        """
        encoded = tuple(
            (name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls
        )
        return cls(
            content=text,
            calls=encoded,
            argument_chunks=argument_chunks,
            usage=usage,
            silence=silence,
            reasoning=reasoning,
        )

    @classmethod
    def error(cls, status: int, body: Any = None, headers: dict[str, str] | None = None) -> Reply:
        """An HTTP error; the body defaults to OpenAI's error shape, a str body is sent as is."""
        if body is None:
            body = {"error": {"message": f"Scripted error {status}.", "type": "error"}}
        return cls(status=status, body=body, headers=tuple((headers or {}).items()))

    @classmethod
    def forever(cls, text: str = "tick ", delay: float = 0.05) -> Reply:
        """A stream sending ``text`` every ``delay`` seconds until the client goes away."""
        return cls(content=text, delay=delay, endless=True)

    @classmethod
    def hang(cls, pings: float = 0.0) -> Reply:
        """A stream that sends its headers and one empty chunk, then nothing until disconnect
        (but a ``: ping`` comment every ``pings`` seconds when given, as a busy server)."""
        return cls(silent=True, pings=pings)

    @classmethod
    def empty(cls) -> Reply:
        """An HTTP 200 event stream with no event at all."""
        return cls(raw_body="")

    @classmethod
    def raw(cls, body: str) -> Reply:
        """A 200 event stream whose body is ``body`` verbatim (for malformed streams)."""
        return cls(raw_body=body)


def prompt_chars(messages: list[dict[str, Any]]) -> int:
    """The characters of a request's message contents and tool-call arguments."""
    total = 0
    for message in messages:
        total += len(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            total += len((call.get("function") or {}).get("arguments") or "")
    return total


class QuietServer(ThreadingHTTPServer):
    """A threading server for many streams that ignores clients hanging up between requests."""

    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the fake received: method, path, headers (lower-case names) and JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any


class FakeModel:
    """The server: ``start()``/``stop()`` or a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(
        self,
        default: Reply | None = None,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
        models: list[str] | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        context_chars: int | None = None,
        rejects_null_content: bool = False,
        refuses_tools: set[str] | frozenset[str] = frozenset(),
        contexts: dict[str, int] | None = None,
    ) -> None:
        self.default = default or Reply.text("Hello from the fake model.")
        self.responder = responder
        self.models = models if models is not None else ["fake-model", "fake-model-no-tools"]
        self.api_key = api_key  # when set, other keys get a 401 as from a real provider
        self.host = host
        self.context_chars = context_chars
        self.rejects_null_content = rejects_null_content
        self.refuses_tools = refuses_tools
        self.contexts = contexts or {}
        self.disconnects = 0
        self.open_streams = 0
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()
        self.connections: set[Any] = set()

    # Scripting and inspection -------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies, served first in, first out, before the default."""
        with self._changed:
            self._queue.extend(replies)

    def clear_script(self) -> None:
        """Drop the replies still queued, and the responder."""
        with self._changed:
            self._queue.clear()
        self.responder = None

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, oldest first."""
        with self._changed:
            return list(self._requests)

    def chat_requests(self) -> list[RecordedRequest]:
        """The chat completion requests received so far, oldest first."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def last_request(self) -> RecordedRequest:
        """The most recent request; AssertionError when there was none."""
        requests = self.requests
        assert requests, "the fake model received no request"
        return requests[-1]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Wait until ``count`` requests arrived and return them; AssertionError on timeout."""
        with self._changed:
            ok = self._changed.wait_for(lambda: len(self._requests) >= count, timeout)
            assert ok, f"the fake model received {len(self._requests)} requests, not {count}"
            return list(self._requests)

    def wait_for_disconnects(self, count: int = 1, timeout: float = 5.0) -> None:
        """Wait until ``count`` streams were closed by the client early; AssertionError else."""
        with self._changed:
            ok = self._changed.wait_for(lambda: self.disconnects >= count, timeout)
            assert ok, f"the fake model saw {self.disconnects} disconnects, not {count}"

    # Used by the request handler ------------------------------------------------------------

    def record(self, request: RecordedRequest) -> Reply:
        """Store a request and pick its reply (a real server's refusal before the script)."""
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()
            refusal = self.refusal(request.json)
            if refusal is not None:
                return refusal
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None and isinstance(request.json, dict):
            return self.responder(request.json)
        return self.default

    def refusal(self, body: Any) -> Reply | None:
        """The answer a real server gives a chat request it cannot take, or None."""
        if not isinstance(body, dict) or "messages" not in body:
            return None
        messages = body.get("messages") or []
        if self.rejects_null_content and any(
            m.get("role") == "assistant" and "content" in m and m["content"] is None
            for m in messages
        ):
            detail = "messages.assistant.content: Input should be a valid string"
            return Reply.error(500, {"error": {"message": detail, "type": "server_error"}})
        if body.get("tools") and body.get("model") in self.refuses_tools:
            detail = f"{body['model']} does not support tools"
            return Reply.error(400, {"error": {"message": detail, "type": "api_error"}})
        if self.context_chars is not None and prompt_chars(messages) > self.context_chars:
            return Reply.empty()
        return None

    def stream_opened(self) -> None:
        """Count a stream that started."""
        with self._changed:
            self.open_streams += 1

    def stream_closed(self, disconnected: bool) -> None:
        """Count a stream that ended, early by the client when ``disconnected``."""
        with self._changed:
            self.open_streams -= 1
            if disconnected:
                self.disconnects += 1
            self._changed.notify_all()

    # Lifecycle --------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        assert self._server is not None, "the fake model is not started"
        return f"http://{self.host}:{self._server.server_address[1]}/v1"

    def start(self) -> FakeModel:
        """Listen on a free loopback port and serve in a daemon thread."""
        server = QuietServer((self.host, 0), FakeModelHandler)
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end open streams and close every connection."""
        if self._server is None:
            return
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._changed:
            connections = list(self.connections)
        for connection in connections:
            FakeModelHandler.shut(connection)
        if self._thread is not None:
            self._thread.join(5)
        self._server = None

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
